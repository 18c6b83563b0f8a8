package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/expd/expd/internal/eventmix"
)

// batch is one request's events, encoded once before timing starts.
type batch struct {
	events      []map[string]any
	body        []byte
	contentType string // "": application/json
	key         string // "": the bench org's publishable key
}

// makeBatches builds requests of a realistic mix: half exposures, 40%
// model calls with short prompt and response, 10% business events.
// Event n (users n/3) starts at first, so rounds do not share users.
func makeBatches(experimentID string, first, requests, size int) []batch {
	now := time.Now().UTC()
	out := make([]batch, requests)
	for r := range out {
		evs := make([]map[string]any, size)
		for i := range evs {
			evs[i] = eventmix.Event(experimentID, first+r*size+i, now)
		}
		body, _ := json.Marshal(map[string]any{"events": evs})
		out[r] = batch{events: evs, body: body}
	}
	return out
}

// loadResult is the outcome of timed requests or copies.
type loadResult struct {
	events, rows int
	bytes        int64
	elapsed      time.Duration
	latencies    []time.Duration
	// cpu is this process's CPU time over the load (the in-process API
	// and the HTTP clients; not the database's): unlike elapsed, hardly
	// moved by other processes on the machine.
	cpu time.Duration
	// cost is the CPU of every process the phase ran in, until its
	// background work settled (cpuMeter; ClickHouse phases only).
	cost cpuCost
}

// add sums o into r.
func (r *loadResult) add(o loadResult) {
	r.events += o.events
	r.rows += o.rows
	r.bytes += o.bytes
	r.elapsed += o.elapsed
	r.cpu += o.cpu
	r.cost = r.cost.add(o.cost)
	r.latencies = append(r.latencies, o.latencies...)
}

func (r loadResult) rate() float64 {
	n := r.events
	if n == 0 {
		n = r.rows
	}
	return float64(n) / r.elapsed.Seconds()
}

func (r loadResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(100 * time.Microsecond)
}

// postAll sends every batch to path (/v1/events, /v1/scores, /v1/traces)
// from clients goroutines; every answer must store the whole batch (a 202
// ack, or for traces a 200 without rejected spans).
func postAll(ctx context.Context, env *benchEnv, path string, batches []batch, clients int) (loadResult, error) {
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	work := make(chan batch)
	var (
		mu       sync.Mutex
		res      loadResult
		firstErr error
		wg       sync.WaitGroup
	)
	start, cpu0 := time.Now(), processCPU()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				t0 := time.Now()
				n, err := post(ctx, httpc, env, path, b)
				took := time.Since(t0)
				mu.Lock()
				res.latencies = append(res.latencies, took)
				res.events += n
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
	res.elapsed, res.cpu = time.Since(start), processCPU()-cpu0
	return res, firstErr
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func post(ctx context.Context, httpc *http.Client, env *benchEnv, path string, b batch) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", env.baseURL+path, bytes.NewReader(b.body))
	if err != nil {
		return 0, err
	}
	ct := b.contentType
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	key := b.key
	if key == "" {
		key = env.publishable
	}
	req.Header.Set("X-API-Key", key)
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if path == tracesPath {
		return tracesAck(resp.StatusCode, raw, len(b.events))
	}
	var ack struct {
		Accepted int `json:"accepted"`
		Rejected []any
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &ack) != nil || len(ack.Rejected) > 0 {
		return 0, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	return ack.Accepted, nil
}
