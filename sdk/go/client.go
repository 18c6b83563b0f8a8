// Package expd is the Go client of expd: deterministic local assignment
// from a polled config, prompts and variables from memory, and events
// (exposures, model calls, business outcomes) sent in the background.
// Nothing on the caller's path does network I/O or fails because the
// service misbehaves. See README.md.
package expd

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables read when Options leaves the field empty.
const (
	APIKeyEnv      = "SERVICE_API_KEY"
	BaseURLEnv     = "SERVICE_BASE_URL"
	DefaultBaseURL = "https://api.expd.dev"
)

// ErrMissingAPIKey is returned by New without Options.APIKey or SERVICE_API_KEY.
var ErrMissingAPIKey = errors.New("expd: set Options.APIKey or " + APIKeyEnv)

// Options configure a Client; zero values take the defaults shown.
type Options struct {
	APIKey      string   // default $SERVICE_API_KEY
	BaseURL     string   // default $SERVICE_BASE_URL, else https://api.expd.dev
	Experiments []string // names or ids the application uses; logged when a config lacks one

	PollInterval     time.Duration // 60 s: config polls (ETag / 304)
	FlushInterval    time.Duration // 1 s: event flushes (a full batch flushes at once)
	BatchSize        int           // 500 events per request (max 1,000)
	MaxQueueSize     int           // 10,000 queued events; Track drops beyond (DroppedEvents)
	MaxRetries       int           // 5 retries of a batch after its first attempt
	RetryBackoff     time.Duration // 500 ms, doubling up to MaxBackoff; Retry-After wins
	MaxBackoff       time.Duration // 30 s
	RequestTimeout   time.Duration // 10 s per HTTP request
	SpillPath        string        // JSON-lines file for unsendable batches, replayed within 24 h; "" drops them
	ExposureCacheMax int           // 100,000 (experiment, user) pairs remembered: variant and day of the last exposure
	CaptureText      *bool         // record prompt and response text in model_call events (default true)
	// ModelPrices are USD per token by model name, over the shipped table
	// (model_prices.json): measured calls without CostUSD record the cost of their usage.
	ModelPrices map[string]Price
	// Redact replaces emails, phone numbers, card numbers, IBANs, IP
	// addresses and API keys or tokens in every model_call's prompt,
	// response and error by typed placeholders ([EMAIL], ...) before the
	// event is queued (see Redact). Off by default: off costs nothing.
	Redact bool
	// RedactPatterns are custom patterns, as GET /v1/privacy lists them,
	// applied before the built-in detectors; they turn redaction on. New
	// refuses one that does not compile.
	RedactPatterns []RedactPattern
	// RedactHook runs after the built-in detectors on their result (it can
	// remove more, never less) and turns redaction on; if it panics, the
	// text is sent as [REDACTED].
	RedactHook func(string) string

	HTTPClient *http.Client // for expd's own requests; default a client with RequestTimeout
	Logger     *slog.Logger // default slog.Default()
}

// Client assigns locally and sends events in the background. It is safe
// for concurrent use. Close it to send what is queued.
type Client struct {
	opts        Options
	log         *slog.Logger
	http        *httpClient
	snap        atomic.Pointer[snapshot]
	loaded      chan struct{}
	loadOnce    sync.Once
	exposures   *exposureLog
	day         *dayClock
	sender      *sender
	poller      *poller
	captureText bool
	publishable bool // a publishable key: scores of source human only
	prices      *priceTable
	redact      *redactor // nil: off
	closeOnce   sync.Once
	unknownMu   sync.Mutex
	unknown     map[string]bool
}

// New starts a client: a goroutine fetches the config at once and then
// every PollInterval, another sends events. Assign answers ("", false)
// until the first config loads.
func New(opts Options) (*Client, error) {
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv(APIKeyEnv)
	}
	if opts.APIKey == "" {
		return nil, ErrMissingAPIKey
	}
	if opts.BaseURL == "" {
		opts.BaseURL = os.Getenv(BaseURLEnv)
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	setDefault(&opts.PollInterval, 60*time.Second)
	setDefault(&opts.FlushInterval, time.Second)
	setDefault(&opts.BatchSize, 500)
	setDefault(&opts.MaxQueueSize, 10_000)
	setDefault(&opts.MaxRetries, 5)
	setDefault(&opts.RetryBackoff, 500*time.Millisecond)
	setDefault(&opts.MaxBackoff, 30*time.Second)
	setDefault(&opts.RequestTimeout, 10*time.Second)
	setDefault(&opts.ExposureCacheMax, 100_000)
	if opts.BatchSize > maxBatchEvents {
		return nil, errors.New("expd: BatchSize must be at most 1,000")
	}
	c := &Client{opts: opts, log: opts.Logger, loaded: make(chan struct{}), exposures: newExposureLog(opts.ExposureCacheMax),
		day: startDayClock(), captureText: opts.CaptureText == nil || *opts.CaptureText, unknown: map[string]bool{}}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.prices = newPriceTable(opts.ModelPrices, c.log)
	var err error
	if c.redact, err = newRedactor(opts, c.log.Error); err != nil {
		return nil, err
	}
	// Publishable keys: expd_pk_..., or pk_... issued before the expd_ prefixes.
	c.publishable = strings.HasPrefix(opts.APIKey, "expd_pk_") || strings.HasPrefix(opts.APIKey, "pk_")
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: opts.RequestTimeout}
	}
	c.http = &httpClient{base: opts.BaseURL, key: opts.APIKey, client: hc}
	c.poller = newPoller(c)
	c.sender = newSender(c)
	go c.poller.run()
	go c.sender.run()
	return c, nil
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Ready tells whether a config has loaded.
func (c *Client) Ready() bool { return c.snap.Load() != nil }

// ConfigVersion is the loaded config's version (0 before the first load).
func (c *Client) ConfigVersion() int64 {
	if s := c.snap.Load(); s != nil {
		return s.version
	}
	return 0
}

// DroppedEvents counts events lost: queue full, refused by the server, or
// undeliverable without a spill file.
func (c *Client) DroppedEvents() int64 { return c.sender.dropped.Load() }

// WaitReady blocks until the first config loads or ctx ends.
func (c *Client) WaitReady(ctx context.Context) error {
	select {
	case <-c.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Assign returns the user's variant by local bucketing on the polled
// config, or ("", false) until it loads or when the experiment is not
// running (treat as control). experiment is a name or an id. The first
// call per (experiment, user, variant, UTC day) queues an exposure. The
// attributes a targeted experiment reads come from ctx (WithAttributes);
// a user who does not match gets control, outside the experiment, with no
// exposure.
func (c *Client) Assign(ctx context.Context, experiment, userID string) (string, bool) {
	v, _, ok := c.expose(ctx, experiment, userID, exposeDaily)
	return v, ok
}

// AssignWith is Assign with the user's attributes given (docs/targeting.md).
func (c *Client) AssignWith(ctx context.Context, experiment, userID string, attrs map[string]any) (string, bool) {
	return c.Assign(WithAttributes(ctx, attrs), experiment, userID)
}

type attributesKey struct{}

// WithAttributes binds a user's attributes to ctx: every decision made with
// it (Assign, AssignDetail, GetPrompt, GetVariables, Transport,
// StartModelCall) evaluates targeting conditions on them. Values are JSON
// values: nil, bool, numbers, string, []any, map[string]any.
func WithAttributes(ctx context.Context, attrs map[string]any) context.Context {
	return context.WithValue(ctx, attributesKey{}, attrs)
}

func attributesFrom(ctx context.Context) map[string]any {
	if ctx == nil {
		return nil
	}
	attrs, _ := ctx.Value(attributesKey{}).(map[string]any)
	return attrs
}

// AssignDetail is Assign with the whole decision: the variant, whether the
// user is in the experiment (counted by its analysis) and the reason code,
// as POST /v1/assign answers them. An experiment that is not running gives
// everyone its one variant with InExperiment false (ReasonNotRunning,
// ReasonShipped). It queues the same exposure as Assign.
func (c *Client) AssignDetail(ctx context.Context, experiment, userID string) (Decision, bool) {
	d, _, ok := c.decide(ctx, experiment, userID, exposeDaily)
	return d, ok
}

// PeekDetail is AssignDetail without queueing an exposure, for integrations
// that record the exposure themselves once the value is used (the
// OpenFeature provider does it in an after-evaluation hook, with
// AssignDetail). ok is false until the config loads or for an unknown
// experiment.
func (c *Client) PeekDetail(ctx context.Context, experiment, userID string) (Decision, bool) {
	d, _, ok := c.decide(ctx, experiment, userID, exposeNone)
	return d, ok
}

// VariablesOf returns a copy of the variant's custom variables (nil when it
// has none or the experiment is unknown); it decides nothing and records
// nothing.
func (c *Client) VariablesOf(experiment, variant string) map[string]any {
	e := c.find(experiment)
	if e == nil || len(e.Variants[variant].Variables) == 0 {
		return nil
	}
	return maps.Clone(e.Variants[variant].Variables)
}

// Prompt is what GetPrompt answers.
type Prompt struct {
	Variant  string // "" before the config loads
	Text     string // the variant's prompt, or the default
	Fallback bool   // the default was used
}

// GetPrompt returns the variant's prompt, or def with Fallback set when the
// config is not loaded, the experiment is unknown or the variant has no prompt.
func (c *Client) GetPrompt(ctx context.Context, experiment, userID, def string) Prompt {
	v, e, ok := c.expose(ctx, experiment, userID, exposeDaily)
	if ok {
		if p := e.Variants[v].Prompt; p != nil {
			return Prompt{Variant: v, Text: *p}
		}
	}
	return Prompt{Variant: v, Text: def, Fallback: true}
}

// GetVariables returns the variant's custom variables merged over defaults (a new map).
func (c *Client) GetVariables(ctx context.Context, experiment, userID string, defaults map[string]any) map[string]any {
	out := make(map[string]any, len(defaults))
	maps.Copy(out, defaults)
	if v, e, ok := c.expose(ctx, experiment, userID, exposeDaily); ok {
		maps.Copy(out, e.Variants[v].Variables)
	}
	return out
}

// Event types of the ingest API.
const (
	EventExposure      = "exposure"
	EventModelCall     = "model_call"
	EventBusinessEvent = "business_event"
)

// Track queues one event without blocking; false if it was dropped. event
// is a type (exposure, model_call, business_event) or a business metric
// name (sent as a business_event with business_metric = event). payload
// holds wire fields (experiment_id as name or id, user_id, value, ...);
// event_id and timestamp are filled unless given, a missing variant from
// local assignment.
func (c *Client) Track(ctx context.Context, event string, payload map[string]any) bool {
	fields := make(map[string]any, len(payload)+4)
	for k, v := range payload {
		fields[k] = v
	}
	if event != EventExposure && event != EventModelCall && event != EventBusinessEvent {
		if _, ok := fields["business_metric"]; !ok {
			fields["business_metric"] = event
		}
		event = EventBusinessEvent
	}
	return c.record(event, fields)
}

// Flush sends what is queued; nil once everything went out (or was given
// up), ctx's error if it ends first.
func (c *Client) Flush(ctx context.Context) error { return c.sender.flush(ctx) }

// Close stops polling and sends what is queued until ctx ends; the rest is
// spilled (or dropped with a log line).
func (c *Client) Close(ctx context.Context) error {
	var err error
	c.closeOnce.Do(func() {
		c.poller.stop()
		c.day.stop()
		err = c.sender.close(ctx)
	})
	return err
}

// expose is decide's variant.
func (c *Client) expose(ctx context.Context, experimentRef, userID string, mode exposure) (string, *experiment, bool) {
	d, e, ok := c.decide(ctx, experimentRef, userID, mode)
	return d.Variant, e, ok
}

// decide resolves the user's decision and queues the exposure mode owes:
// none (Track), once per UTC day, or always (a model call's, which also
// counts as the day's).
func (c *Client) decide(ctx context.Context, experimentRef, userID string, mode exposure) (Decision, *experiment, bool) {
	e := c.find(experimentRef)
	if e == nil {
		return Decision{}, nil, false
	}
	day := c.day.day.Load()
	d, ok, send, f := c.exposures.resolve(e, userID, attributesFrom(ctx), day, mode)
	if !ok {
		return Decision{}, nil, false
	}
	if send {
		c.sender.enqueue(newEvent(EventExposure, map[string]any{
			"experiment_id": e.ID, "user_id": userID, "variant": d.Variant, "config_version": c.ConfigVersion(),
		}))
	}
	if mode != exposeNone {
		// The user's side of each holdout whose step this decision
		// evaluated, held out or not (docs/targeting.md).
		for _, h := range c.exposures.holdoutsDue(e, userID, &f, day) {
			c.sender.enqueue(newEvent(EventExposure, map[string]any{
				"experiment_id": h[0], "user_id": userID, "variant": h[1], "config_version": c.ConfigVersion(),
			}))
		}
	}
	return d, e, true
}

func (c *Client) find(ref string) *experiment {
	s := c.snap.Load()
	if s == nil {
		return nil
	}
	e := s.byKey[ref]
	if e == nil {
		c.unknownMu.Lock()
		if !c.unknown[ref] && len(c.unknown) < 1000 {
			c.unknown[ref] = true
			c.log.Warn("expd: experiment is not running in the loaded config", "experiment", ref, "config_version", s.version)
		}
		c.unknownMu.Unlock()
	}
	return e
}

// record canonicalises the experiment, fills a missing variant, bounds text and enqueues.
func (c *Client) record(event string, fields map[string]any) bool {
	if ref, ok := fields["experiment_id"].(string); ok {
		if s := c.snap.Load(); s != nil {
			if e := s.byKey[ref]; e != nil {
				fields["experiment_id"] = e.ID
				if v, _ := fields["variant"].(string); v == "" {
					if u, ok := fields["user_id"].(string); ok {
						// Assign's cache: no hashing for a user seen on this config.
						if d, ok, _, _ := c.exposures.resolve(e, u, nil, c.day.day.Load(), exposeNone); ok {
							fields["variant"] = d.Variant
						}
					}
				}
			}
		}
	}
	if v, ok := fields["variant"]; ok && (v == nil || v == "") {
		delete(fields, "variant")
	}
	if event == EventModelCall {
		if c.redact != nil {
			c.redact.fields(fields)
		}
		boundText(fields)
	}
	return c.sender.enqueue(newEvent(event, fields))
}

func (c *Client) installed(s *snapshot) {
	c.loadOnce.Do(func() { close(c.loaded) })
	for _, name := range c.opts.Experiments {
		if s.byKey[name] == nil {
			c.log.Warn("expd: experiment not running in the loaded config", "experiment", name, "config_version", s.version)
		}
	}
}
