package expd

import (
	"context"
	"sync"
	"time"
)

// minForcedGap bounds refreshes triggered by acks reporting a newer version.
const minForcedGap = time.Second

// poller keeps the config fresh: a fetch at start, then every PollInterval
// with If-None-Match (304 keeps it), and soon after an ack reports a newer
// config_version. Failures back off; the last good config stays.
type poller struct {
	c        *Client
	wake     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func newPoller(c *Client) *poller {
	return &poller{c: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (p *poller) stop() { p.stopOnce.Do(func() { close(p.done) }) }

// noticeVersion wakes the poller when the server reports a newer config.
func (p *poller) noticeVersion(v int64) {
	if s := p.c.snap.Load(); s == nil || v > s.version {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *poller) run() {
	failures := 0
	last := time.Time{}
	for {
		if gap := time.Since(last); gap < minForcedGap {
			select {
			case <-time.After(minForcedGap - gap):
			case <-p.done:
				return
			}
		}
		last = time.Now()
		delay := p.c.opts.PollInterval
		if after, has, ok := p.fetch(); !ok {
			delay = backoff(failures, time.Second, p.c.opts.PollInterval, after, has)
			failures++
		} else {
			failures = 0
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-p.wake:
			t.Stop()
		case <-p.done:
			t.Stop()
			return
		}
	}
}

// fetch fetches once; ok false on failure, with the server's Retry-After if any.
func (p *poller) fetch() (after time.Duration, hasAfter, ok bool) {
	c := p.c
	current := c.snap.Load()
	header := map[string]string{}
	if current != nil && current.etag != "" {
		header["If-None-Match"] = current.etag
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.RequestTimeout)
	defer cancel()
	res, err := c.http.do(ctx, "GET", "/v1/config", nil, header)
	if err != nil {
		c.log.Warn("expd: config fetch failed", "error", err)
		return 0, false, false
	}
	if res.status == 304 && current != nil {
		return 0, false, true
	}
	if res.status != 200 {
		c.log.Warn("expd: config fetch failed", "status", res.status)
		after, has := retryAfter(res.header)
		return after, has, false
	}
	s, err := parseConfig(res.body, res.header.Get("ETag"))
	if err != nil {
		c.log.Error("expd: config from the server is malformed, keeping the last one", "error", err)
		return 0, false, false
	}
	// A lagging replica may serve an older version; never move backwards.
	if current == nil || s.version >= current.version {
		c.snap.Store(s)
		if current == nil || current.version != s.version {
			c.installed(s)
		}
	}
	return 0, false, true
}
