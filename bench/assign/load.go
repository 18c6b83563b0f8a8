package main

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// scenario builds the i-th request of a load; want is the expected status.
type scenario struct {
	name  string
	want  int
	build func(i int64) *http.Request
	// count, when > 0, ends a closed run after that many requests.
	count int64
}

type loader struct{ concurrency int }

type result struct {
	requests  int64
	errors    int64
	elapsed   time.Duration
	latencies []time.Duration
}

func (r result) rate() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	slices.Sort(r.latencies)
	return r.latencies[int(p*float64(len(r.latencies)-1))]
}

func (l loader) client() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: l.concurrency, MaxConnsPerHost: l.concurrency}}
}

// closed runs the scenario as fast as the connections allow, for d or
// until s.count requests.
func (l loader) closed(s scenario, d time.Duration) result {
	c := l.client()
	var next, done, errs atomic.Int64
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range l.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if (s.count > 0 && i >= s.count) || (s.count == 0 && time.Now().After(deadline)) {
					return
				}
				if !send(c, s, i) {
					errs.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	return result{requests: done.Load(), errors: errs.Load(), elapsed: time.Since(start)}
}

// open sends at a fixed total rate for d and records each latency from the
// request's scheduled start, so a stalled server is not hidden by the
// load slowing down with it.
func (l loader) open(s scenario, rate float64, d time.Duration) result {
	c := l.client()
	interval := time.Duration(float64(time.Second) * float64(l.concurrency) / rate)
	start := time.Now()
	var mu sync.Mutex
	var all []time.Duration
	var errs atomic.Int64
	var wg sync.WaitGroup
	for w := range l.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			offset := time.Duration(w) * interval / time.Duration(l.concurrency)
			var mine []time.Duration
			for n := int64(0); ; n++ {
				at := start.Add(offset + time.Duration(n)*interval)
				if at.Sub(start) > d {
					break
				}
				time.Sleep(time.Until(at))
				if !send(c, s, n*int64(l.concurrency)+int64(w)) {
					errs.Add(1)
				}
				mine = append(mine, time.Since(at))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return result{requests: int64(len(all)), errors: errs.Load(), elapsed: time.Since(start), latencies: all}
}

func send(c *http.Client, s scenario, i int64) bool {
	resp, err := c.Do(s.build(i))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == s.want
}
