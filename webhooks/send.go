package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// RequestTimeout bounds one delivery attempt (connect, send, answer).
const RequestTimeout = 15 * time.Second

// Body is what a subscriber receives: {type, timestamp, data}.
type Body struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Payload encodes the body of ev (timestamp: when the event occurred).
func Payload(ev Event) ([]byte, error) {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	b, err := json.Marshal(Body{Type: ev.Type, Timestamp: ev.OccurredAt.UTC(), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}

// Sender sends signed deliveries. AllowPrivate (expd dev, tests) lets it
// reach loopback and private addresses; otherwise its dialer refuses any
// address that is not public after resolution, which also covers a name
// that resolved to a public address at registration and a private one now.
type Sender struct {
	AllowPrivate bool
	Client       *http.Client // nil: one built by NewSender's rules
}

// ErrPrivateAddress is a delivery refused because the endpoint's host
// resolved to a non-public address.
var ErrPrivateAddress = errors.New("endpoint resolves to a private, loopback or link-local address")

// HTTPClient is the sender's client: its dialer refuses non-public
// addresses unless AllowPrivate, it uses no proxy and follows no
// redirect. Other outbound callers of customer-named URLs (LLM judges)
// use the same rules.
func (s *Sender) HTTPClient() *http.Client { return s.client() }

func (s *Sender) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !s.AllowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !Public(ap.Addr()) {
				return ErrPrivateAddress
			}
			return nil
		}
	}
	s.Client = &http.Client{
		Timeout: RequestTimeout,
		Transport: &http.Transport{
			Proxy:               nil, // a proxy would dial for us and skip the address check
			DialContext:         dialer.DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
		},
		// A redirect is an answer, not a new destination: following it
		// would let an endpoint send signed events elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s.Client
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	StatusCode int           // 0 when no answer arrived
	Err        error         // nil on a 2xx answer
	Duration   time.Duration // from sending to the answer's status (or failure)
	// RetryAfter is the wait a 429 or 503 answer asked for in its
	// Retry-After header (seconds or an HTTP date); 0 when none was given.
	RetryAfter time.Duration
}

// Gone tells whether the receiver answered 410 Gone: it wants no more
// deliveries to this URL.
func (a Attempt) Gone() bool { return a.StatusCode == http.StatusGone }

// Send signs payload for ev with secret (Standard Webhooks: webhook-id is
// the event id, webhook-timestamp now, webhook-signature the svix HMAC)
// and posts it to url. Any answer other than 2xx is a failure.
func (s *Sender) Send(ctx context.Context, url, secret string, ev Event, now time.Time) Attempt {
	payload, err := Payload(ev)
	if err != nil {
		return Attempt{Err: err}
	}
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		return Attempt{Err: errors.New("endpoint secret is not a Standard Webhooks secret")}
	}
	sig, err := wh.Sign(ev.ID, now, payload)
	if err != nil {
		return Attempt{Err: fmt.Errorf("sign event %s: %w", ev.ID, err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return Attempt{Err: fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "expd-webhooks/1")
	req.Header.Set("webhook-id", ev.ID)
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", sig)
	start := time.Now()
	resp, err := s.client().Do(req)
	if err != nil {
		return Attempt{Err: Scrub(err), Duration: time.Since(start)}
	}
	d := time.Since(start)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a := Attempt{StatusCode: resp.StatusCode, Err: fmt.Errorf("endpoint answered %d", resp.StatusCode), Duration: d}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			a.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), now)
		}
		return a
	}
	return Attempt{StatusCode: resp.StatusCode, Duration: d}
}

// RetryAfter reads a Retry-After value (RFC 9110: delay-seconds or an
// HTTP date) relative to now; 0 when absent, malformed or past.
func RetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), maxRetryAfter)
	}
	return 0
}

// maxRetryAfter caps a parsed Retry-After before the caller applies its
// own bound (a huge value must not overflow a Duration).
const maxRetryAfter = 30 * 24 * time.Hour

// Scrub keeps the cause of a transport error and drops the wrapping that
// repeats the method and URL (the URL may carry a customer's token in its
// query).
func Scrub(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			if errors.Is(inner, ErrPrivateAddress) {
				return ErrPrivateAddress
			}
			return inner
		}
	}
	return err
}
