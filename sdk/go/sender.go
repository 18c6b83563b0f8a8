package expd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	maxBatchEvents = 1000
	maxBatchBytes  = 1 << 20
	replayWindow   = 24 * time.Hour
)

var retryable = map[int]bool{408: true, 425: true, 429: true, 500: true, 502: true, 503: true, 504: true}

// route is where records of one kind go, and how one goes on the wire.
type route struct {
	path, noun string
	wire       func(map[string]any) map[string]any // nil: the record as queued
}

var (
	eventsRoute = route{path: "/v1/events", noun: "events"}
	scoresRoute = route{path: "/v1/scores", noun: "scores", wire: withoutType}
)

func withoutType(record map[string]any) map[string]any {
	wire := make(map[string]any, len(record))
	for k, v := range record {
		if k != "type" {
			wire[k] = v
		}
	}
	return wire
}

// sender queues events (Track's only work: a lock and an append) and one
// goroutine posts them to POST /v1/events, retrying with backoff that
// honours Retry-After, then spilling or dropping a batch it cannot send.
// Scores share the queue, the batching, the retries and the spill file;
// records of type score are posted to POST /v1/scores (without the type).
type sender struct {
	c       *Client
	mu      sync.Mutex
	queue   []map[string]any
	closed  bool
	dropped atomic.Int64
	wake    chan struct{}
	flushes chan chan struct{}
	stopped chan struct{} // closed by close(): the loop drains once more and exits
	exited  chan struct{}
	// deadline is set by close: past it, batches are spilled without sending.
	deadline atomic.Pointer[time.Time]
	failing  bool
}

func newSender(c *Client) *sender {
	return &sender{c: c, wake: make(chan struct{}, 1), flushes: make(chan chan struct{}), stopped: make(chan struct{}), exited: make(chan struct{})}
}

func (s *sender) enqueue(event map[string]any) bool {
	s.mu.Lock()
	if s.closed || len(s.queue) >= s.c.opts.MaxQueueSize {
		s.mu.Unlock()
		if n := s.dropped.Add(1); n == 1 || n%1000 == 0 {
			s.c.log.Warn("expd: event queue full or client closed; events dropped", "dropped", n)
		}
		return false
	}
	s.queue = append(s.queue, event)
	full := len(s.queue) >= s.c.opts.BatchSize
	s.mu.Unlock()
	if full {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return true
}

func (s *sender) run() {
	defer close(s.exited)
	s.replay()
	tick := time.NewTicker(s.c.opts.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.drain()
		case <-s.wake:
			s.drain()
		case done := <-s.flushes:
			s.drain()
			close(done)
		case <-s.stopped:
			s.drain()
			return
		}
	}
}

func (s *sender) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case s.flushes <- done:
	case <-s.exited:
		return errors.New("expd: client closed")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sender) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if d, ok := ctx.Deadline(); ok {
		s.deadline.Store(&d)
	}
	close(s.stopped)
	var err error
	select {
	case <-s.exited:
	case <-ctx.Done():
		err = ctx.Err()
		now := time.Now()
		s.deadline.Store(&now)
	}
	s.mu.Lock()
	rest := s.queue
	s.queue = nil
	s.mu.Unlock()
	s.giveUp(rest, "client closed")
	return err
}

func (s *sender) drain() {
	for {
		s.mu.Lock()
		n := min(len(s.queue), s.c.opts.BatchSize)
		batch := append([]map[string]any(nil), s.queue[:n]...)
		s.queue = s.queue[n:]
		s.mu.Unlock()
		if n == 0 {
			return
		}
		s.deliver(batch)
	}
}

func (s *sender) pastDeadline() bool {
	d := s.deadline.Load()
	return d != nil && !time.Now().Before(*d)
}

func (s *sender) deliver(batch []map[string]any) {
	var events, scores []map[string]any
	for _, r := range batch {
		if r["type"] == eventScore {
			scores = append(scores, r)
		} else {
			events = append(events, r)
		}
	}
	s.deliverRoute(eventsRoute, events)
	s.deliverRoute(scoresRoute, scores)
}

// deliverRoute posts records of one kind in bodies under 1 MiB.
func (s *sender) deliverRoute(rt route, records []map[string]any) {
	var parts [][]byte
	var members []map[string]any
	open := []byte(`{"` + rt.noun + `":[`)
	size := len(open) + 2
	send := func() {
		if len(parts) > 0 {
			s.deliverBody(rt, append(append(append([]byte(nil), open...), bytes.Join(parts, []byte(","))...), ']', '}'), members)
		}
		parts, members, size = nil, nil, len(open)+2
	}
	for _, e := range records {
		wire := e
		if rt.wire != nil {
			wire = rt.wire(e)
		}
		raw, err := json.Marshal(wire)
		if err != nil || len(raw)+len(open)+2 > maxBatchBytes {
			s.dropped.Add(1)
			s.c.log.Error("expd: record cannot be encoded or exceeds 1 MiB; dropped", "route", rt.path, "error", err)
			continue
		}
		if size+len(raw)+1 > maxBatchBytes {
			send()
		}
		parts, members, size = append(parts, raw), append(members, e), size+len(raw)+1
	}
	send()
}

func (s *sender) deliverBody(rt route, body []byte, events []map[string]any) {
	// While the server is known to be failing, a batch gets one attempt, so
	// batches reach the spill file as fast as they arrive.
	retries := s.c.opts.MaxRetries
	if s.failing {
		retries = 0
	}
	for attempt := 0; ; attempt++ {
		if s.pastDeadline() {
			s.giveUp(events, "client closed before the batch could be sent")
			return
		}
		failure, after, hasAfter := s.post(rt, body, events)
		if failure == "" {
			s.failing = false
			return
		}
		if attempt >= retries || s.deadline.Load() != nil {
			s.failing = true
			s.giveUp(events, fmt.Sprintf("%d attempts failed, last: %s", attempt+1, failure))
			return
		}
		t := time.NewTimer(backoff(attempt, s.c.opts.RetryBackoff, s.c.opts.MaxBackoff, after, hasAfter))
		select {
		case <-t.C:
		case <-s.stopped:
			t.Stop()
		}
	}
}

// post makes one attempt: "" when done with the batch, else why it failed.
func (s *sender) post(rt route, body []byte, events []map[string]any) (string, time.Duration, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), s.c.opts.RequestTimeout)
	defer cancel()
	res, err := s.c.http.do(ctx, "POST", rt.path, body, nil)
	if err != nil {
		return err.Error(), 0, false
	}
	switch {
	case res.status >= 200 && res.status < 300:
		var ack struct {
			Rejected      []map[string]any `json:"rejected"`
			ConfigVersion *int64           `json:"config_version"`
		}
		_ = json.Unmarshal(res.body, &ack)
		if len(ack.Rejected) > 0 {
			s.dropped.Add(int64(len(ack.Rejected)))
			s.c.log.Warn("expd: server rejected records; dropped", "route", rt.path, "rejected", len(ack.Rejected), "of", len(events), "first", ack.Rejected[0])
		}
		if ack.ConfigVersion != nil {
			s.c.poller.noticeVersion(*ack.ConfigVersion)
		}
		return "", 0, false
	case retryable[res.status]:
		after, has := retryAfter(res.header)
		return "HTTP " + strconv.Itoa(res.status), after, has
	default:
		s.dropped.Add(int64(len(events)))
		s.c.log.Error("expd: server refused records; dropped", "route", rt.path, "status", res.status, "records", len(events), "answer", string(res.body))
		return "", 0, false
	}
}

func (s *sender) giveUp(events []map[string]any, reason string) {
	if len(events) == 0 {
		return
	}
	if path := s.c.opts.SpillPath; path != "" {
		if err := spill(path, events); err == nil {
			s.c.log.Warn("expd: events spilled", "reason", reason, "events", len(events), "path", path)
			return
		} else {
			s.c.log.Error("expd: could not spill events", "error", err)
		}
	}
	s.dropped.Add(int64(len(events)))
	s.c.log.Error("expd: events dropped (no spill file)", "reason", reason, "events", len(events))
}

// spill appends events as JSON lines in one write, which keeps lines whole across processes.
func spill(path string, events []map[string]any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replay claims the spill file (a rename, so two processes never replay the
// same lines) and queues its events younger than 24 h, ahead of new ones.
func (s *sender) replay() {
	path := s.c.opts.SpillPath
	if path == "" {
		return
	}
	claimed := fmt.Sprintf("%s.replay-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	if err := os.Rename(path, claimed); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.c.log.Error("expd: could not claim spill file", "error", err)
		}
		return
	}
	defer os.Remove(claimed)
	f, err := os.Open(claimed)
	if err != nil {
		s.c.log.Error("expd: could not read spill file", "error", err)
		return
	}
	defer f.Close()
	oldest := time.Now().Add(-replayWindow)
	var fresh []map[string]any
	expired, unreadable := 0, 0
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 64<<10), 2<<20)
	for lines.Scan() {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		var e map[string]any
		dec := json.NewDecoder(bytes.NewReader(lines.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&e); err != nil {
			unreadable++
			continue
		}
		ts, _ := e["timestamp"].(string)
		t, err := time.Parse(time.RFC3339Nano, ts)
		switch {
		case err != nil:
			unreadable++
		case t.Before(oldest):
			expired++
		default:
			fresh = append(fresh, e)
		}
	}
	if expired+unreadable > 0 {
		s.c.log.Warn("expd: discarded spilled events", "older_than_24h", expired, "unreadable", unreadable)
	}
	if len(fresh) > 0 {
		s.mu.Lock()
		s.queue = append(fresh, s.queue...)
		s.mu.Unlock()
	}
}
