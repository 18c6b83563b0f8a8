package otlp

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/expd/expd/ingest"
	"github.com/expd/expd/vocab"
)

// The attributes naming a model call's experiment, variant and user. They
// may travel as W3C baggage (same keys), which a baggage span processor
// copies onto spans; expd's clients do not set that baggage yet.
const (
	AttrExperiment = "expd.experiment"
	AttrVariant    = "expd.variant"
	AttrUser       = "expd.user"
	attrUserID     = "user.id" // the semantic conventions' user id, when expd.user is absent
)

// Calls is what a request's spans give: the model_call events, in span
// order, and how many spans gave none, by reason.
type Calls struct {
	Events   []ingest.Event
	Spans    int // every span of the request
	NotGenAI int // no gen_ai.operation.name, gen_ai.provider.name or gen_ai.system
	Untagged int // a GenAI span without expd.experiment, expd.variant and expd.user (or user.id)
}

// Skipped is the spans that gave no event.
func (c Calls) Skipped() int { return c.NotGenAI + c.Untagged }

// SkippedMessage explains Skipped for the answer's partial_success; ""
// when every span gave an event.
func (c Calls) SkippedMessage() string {
	if c.Skipped() == 0 {
		return ""
	}
	var parts []string
	if c.NotGenAI > 0 {
		parts = append(parts, fmt.Sprintf("%d not GenAI spans (no gen_ai.operation.name, gen_ai.provider.name or gen_ai.system attribute)", c.NotGenAI))
	}
	if c.Untagged > 0 {
		parts = append(parts, fmt.Sprintf("%d GenAI spans without the %s, %s and %s (or %s) attributes or baggage", c.Untagged, AttrExperiment, AttrVariant, AttrUser, attrUserID))
	}
	return fmt.Sprintf("%d of %d spans not stored as model calls: %s", c.Skipped(), c.Spans, strings.Join(parts, "; "))
}

// ModelCalls turns a request's spans into model_call events.
func ModelCalls(req *coltracepb.ExportTraceServiceRequest) Calls {
	var out Calls
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				out.Spans++
				a := attrsOf(sp.GetAttributes())
				if !a.has("gen_ai.operation.name") && !a.has("gen_ai.provider.name") && !a.has("gen_ai.system") {
					out.NotGenAI++
					continue
				}
				user := a.text(AttrUser)
				if user == "" {
					user = a.text(attrUserID)
				}
				exp, variant := a.text(AttrExperiment), a.text(AttrVariant)
				if exp == "" || variant == "" || user == "" {
					out.Untagged++
					continue
				}
				out.Events = append(out.Events, modelCall(sp, a, exp, variant, user))
			}
		}
	}
	return out
}

// EventID is a span's event id: its trace id and span id in lowercase hex,
// 48 characters (a span id is unique only within its trace). The same span
// sent again has the same id, so the events store keeps it once; a score
// names the call by it.
func EventID(traceID, spanID []byte) string {
	return hex.EncodeToString(traceID) + hex.EncodeToString(spanID)
}

// modelCall is the event of one tagged GenAI span. Its fields are left
// for ingest's validation to check (a malformed id or time included).
func modelCall(sp *tracepb.Span, a attrs, exp, variant, user string) ingest.Event {
	ev := ingest.Event{
		EventID:      EventID(sp.GetTraceId(), sp.GetSpanId()),
		Type:         vocab.TypeModelCall,
		ExperimentID: exp,
		UserID:       user,
		Timestamp:    time.Unix(0, int64(sp.GetStartTimeUnixNano())).UTC().Format(time.RFC3339Nano),
		Variant:      &variant,
	}
	m := &ev.ModelCall
	// Subtract in integers: float64 nanoseconds since 1970 are 256 ns apart.
	latency := float64(int64(sp.GetEndTimeUnixNano())-int64(sp.GetStartTimeUnixNano())) / 1e6
	m.LatencyMs = &latency
	m.Model = a.firstText("gen_ai.response.model", "gen_ai.request.model")
	m.InputTokens = a.integer("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
	m.OutputTokens = a.integer("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
	// No semantic-convention span attribute yet (only a metric); these
	// are what instrumentations record, in seconds.
	if s := a.number("gen_ai.response.time_to_first_chunk", "gen_ai.response.time_to_first_token"); s != nil {
		ms := *s * 1000
		m.TimeToFirstTokenMs = &ms
	}
	m.Error = callError(sp, a)
	m.Prompt, m.Response = content(sp, a)
	m.Provider = a.firstText("gen_ai.provider.name", "gen_ai.system")
	m.FinishReasons = a.joined("gen_ai.response.finish_reasons")
	return ev
}

// callError is set when the span's status is ERROR or error.type is set
// (the conventions' two error signals): error.type, else the status
// message, else "error".
func callError(sp *tracepb.Span, a attrs) *string {
	failed := sp.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR
	if t := a.text("error.type"); t != "" {
		return clip(t, vocab.MaxErrorLen)
	}
	if !failed {
		return nil
	}
	if msg := sp.GetStatus().GetMessage(); msg != "" {
		return clip(msg, vocab.MaxErrorLen)
	}
	e := "error"
	return &e
}

// content is the prompt and response as the instrumentation recorded
// them: the newer gen_ai.input.messages / gen_ai.output.messages
// attributes, else the older span events gen_ai.content.prompt /
// gen_ai.content.completion (attributes gen_ai.prompt, gen_ai.completion).
// Text over vocab.MaxTextBytes is cut, as the clients cut it.
func content(sp *tracepb.Span, a attrs) (prompt, response *string) {
	prompt, response = a.rendered("gen_ai.input.messages"), a.rendered("gen_ai.output.messages")
	for _, e := range sp.GetEvents() {
		ea := attrsOf(e.GetAttributes())
		switch e.GetName() {
		case "gen_ai.content.prompt":
			if prompt == nil {
				prompt = ea.rendered("gen_ai.prompt")
			}
		case "gen_ai.content.completion":
			if response == nil {
				response = ea.rendered("gen_ai.completion")
			}
		}
	}
	return prompt, response
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) *string {
	if len(s) > n {
		s = s[:n]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return &s
}

// attrs indexes a span's attributes by key.
type attrs map[string]*commonpb.AnyValue

func attrsOf(kvs []*commonpb.KeyValue) attrs {
	a := make(attrs, len(kvs))
	for _, kv := range kvs {
		a[kv.GetKey()] = kv.GetValue()
	}
	return a
}

func (a attrs) has(key string) bool { return a[key] != nil }

// text is a string attribute, or an integer one written in decimal (a
// numeric user id); "" otherwise.
func (a attrs) text(key string) string {
	switch v := a[key].GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return v.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(v.IntValue, 10)
	}
	return ""
}

func (a attrs) firstText(keys ...string) *string {
	for _, k := range keys {
		if s := a.text(k); s != "" {
			return &s
		}
	}
	return nil
}

// number reads the first of keys present as a number (int, double or a
// numeric string).
func (a attrs) number(keys ...string) *float64 {
	for _, k := range keys {
		var f float64
		switch v := a[k].GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			f = float64(v.IntValue)
		case *commonpb.AnyValue_DoubleValue:
			f = v.DoubleValue
		case *commonpb.AnyValue_StringValue:
			p, err := strconv.ParseFloat(v.StringValue, 64)
			if err != nil {
				continue
			}
			f = p
		default:
			continue
		}
		return &f
	}
	return nil
}

func (a attrs) integer(keys ...string) *int64 {
	f := a.number(keys...)
	if f == nil || *f != math.Trunc(*f) {
		return nil
	}
	n := int64(*f)
	return &n
}

// joined is a string-array attribute (or a single string) as its
// elements joined by commas; nil when absent or empty.
func (a attrs) joined(key string) *string {
	var parts []string
	switch v := a[key].GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		parts = []string{v.StringValue}
	case *commonpb.AnyValue_ArrayValue:
		for _, e := range v.ArrayValue.GetValues() {
			if s, ok := e.GetValue().(*commonpb.AnyValue_StringValue); ok && s.StringValue != "" {
				parts = append(parts, s.StringValue)
			}
		}
	}
	if len(parts) == 0 || parts[0] == "" {
		return nil
	}
	s := strings.Join(parts, ",")
	return &s
}

// rendered is a content attribute as text: a string as it is (often JSON
// already), a structured value as its JSON.
func (a attrs) rendered(key string) *string {
	v := a[key]
	if v == nil {
		return nil
	}
	if s, ok := v.GetValue().(*commonpb.AnyValue_StringValue); ok {
		return clip(s.StringValue, vocab.MaxTextBytes)
	}
	b, err := json.Marshal(plain(v))
	if err != nil {
		return nil
	}
	return clip(string(b), vocab.MaxTextBytes)
}

// plain is an AnyValue as a Go value for encoding/json.
func plain(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			out[i] = plain(e)
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := make(map[string]any, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			out[kv.GetKey()] = plain(kv.GetValue())
		}
		return out
	}
	return nil
}
