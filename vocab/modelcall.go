package vocab

import "github.com/expd/expd/validate"

// ModelCall is the model-call fields of an event, embedded both in the
// wire event and in the events row (the JSON name is the column name).
// Optional fields are pointers: absent and JSON null both read as unset.
// Every field has one entry in ModelCallFields.
type ModelCall struct {
	Model              *string  `json:"model" gorm:"column:model"`
	LatencyMs          *float64 `json:"latency_ms" gorm:"column:latency_ms"`
	InputTokens        *int64   `json:"input_tokens" gorm:"column:input_tokens"`
	OutputTokens       *int64   `json:"output_tokens" gorm:"column:output_tokens"`
	TotalTokens        *int64   `json:"total_tokens" gorm:"column:total_tokens"`
	CostUSD            *float64 `json:"cost_usd" gorm:"column:cost_usd"`
	TimeToFirstTokenMs *float64 `json:"time_to_first_token_ms" gorm:"column:time_to_first_token_ms"`
	Error              *string  `json:"error" gorm:"column:error"`
	Prompt             *string  `json:"prompt" gorm:"column:prompt"`
	Response           *string  `json:"response" gorm:"column:response"`
	Provider           *string  `json:"provider" gorm:"column:provider"`
	FinishReasons      *string  `json:"finish_reasons" gorm:"column:finish_reasons"`
}

// MetricUse says how a metric may read a model-call field.
type MetricUse int

const (
	NotReadable MetricUse = iota // text a metric cannot read (model, prompt, response, provider, finish_reasons)
	Numeric                      // its value (per user and, for quantiles, per call)
	Indicator                    // 1 when set and non-empty, else 0 (error)
)

// Field is one model-call field: its name (JSON and column), what a
// metric may read of it, and how it is checked on ingest. Exactly one of
// text, number and integer is set.
type Field struct {
	Name     string
	Metric   MetricUse
	Required bool // a model_call event must carry it
	MaxBytes int  // text fields: the longest accepted value
	// The field's address in a ModelCall: read through it, and scanned
	// into by engines that read rows column by column.
	text    func(*ModelCall) **string
	number  func(*ModelCall) **float64
	integer func(*ModelCall) **int64
}

// ModelCallFields is every model-call field, in the order the events
// read and the messages list them.
var ModelCallFields = []Field{
	text("model", MaxModelLen, func(m *ModelCall) **string { return &m.Model }),
	{Name: "latency_ms", Metric: Numeric, Required: true, number: func(m *ModelCall) **float64 { return &m.LatencyMs }},
	{Name: "input_tokens", Metric: Numeric, integer: func(m *ModelCall) **int64 { return &m.InputTokens }},
	{Name: "output_tokens", Metric: Numeric, integer: func(m *ModelCall) **int64 { return &m.OutputTokens }},
	{Name: "total_tokens", Metric: Numeric, integer: func(m *ModelCall) **int64 { return &m.TotalTokens }},
	{Name: "cost_usd", Metric: Numeric, number: func(m *ModelCall) **float64 { return &m.CostUSD }},
	{Name: "time_to_first_token_ms", Metric: Numeric, number: func(m *ModelCall) **float64 { return &m.TimeToFirstTokenMs }},
	{Name: "error", Metric: Indicator, MaxBytes: MaxErrorLen, text: func(m *ModelCall) **string { return &m.Error }},
	text("prompt", MaxTextBytes, func(m *ModelCall) **string { return &m.Prompt }),
	text("response", MaxTextBytes, func(m *ModelCall) **string { return &m.Response }),
	// Added later (migration 0350): at the end, where ALTER TABLE puts
	// them in every engine's table.
	text("provider", MaxModelLen, func(m *ModelCall) **string { return &m.Provider }),
	text("finish_reasons", MaxFinishReasonsLen, func(m *ModelCall) **string { return &m.FinishReasons }),
}

// Bounds of the text fields (docs/ingest.md).
const (
	MaxModelLen  = 256
	MaxErrorLen  = 4 << 10
	MaxTextBytes = 64 << 10 // prompt and response each
	// finish_reasons: the reasons of a call's choices, comma-separated
	// ("stop", "length", "stop,length" for two choices).
	MaxFinishReasonsLen = 256
)

func text(name string, max int, get func(*ModelCall) **string) Field {
	return Field{Name: name, MaxBytes: max, text: get}
}

// ModelCallField returns the field of that name.
func ModelCallField(name string) (Field, bool) {
	for _, f := range ModelCallFields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// MetricFields are the names of the fields a metric may read, for
// messages.
func MetricFields() []string {
	var out []string
	for _, f := range ModelCallFields {
		if f.Metric != NotReadable {
			out = append(out, f.Name)
		}
	}
	return out
}

// ModelCallColumns are the fields' column names, in table order.
func ModelCallColumns() []string {
	out := make([]string, len(ModelCallFields))
	for i, f := range ModelCallFields {
		out[i] = f.Name
	}
	return out
}

// FieldType is how a field is stored: text, a float or an integer.
type FieldType int

const (
	TextField FieldType = iota
	FloatField
	IntegerField
)

// Type is how f is stored.
func (f Field) Type() FieldType {
	switch {
	case f.text != nil:
		return TextField
	case f.number != nil:
		return FloatField
	default:
		return IntegerField
	}
}

// Set tells whether m carries the field.
func (f Field) Set(m *ModelCall) bool {
	switch {
	case f.text != nil:
		return *f.text(m) != nil
	case f.number != nil:
		return *f.number(m) != nil
	default:
		return *f.integer(m) != nil
	}
}

// Value is the field of m as a database argument: its pointer, nil when
// unset.
func (f Field) Value(m *ModelCall) any {
	switch {
	case f.text != nil:
		return *f.text(m)
	case f.number != nil:
		return *f.number(m)
	default:
		return *f.integer(m)
	}
}

// Dest is the address of the field in m, for a row scan into it.
func (f Field) Dest(m *ModelCall) any {
	switch {
	case f.text != nil:
		return f.text(m)
	case f.number != nil:
		return f.number(m)
	default:
		return f.integer(m)
	}
}

// Check adds the field's failures on m to errs: a required field missing,
// a negative number, text too long or not valid UTF-8 (validate.Text).
func (f Field) Check(errs *validate.Errors, m *ModelCall) {
	if f.Required && !f.Set(m) {
		errs.Add(f.Name, "is required for %s events", TypeModelCall)
	}
	switch {
	case f.text != nil:
		errs.OptionalText(f.Name, *f.text(m), f.MaxBytes)
	case f.number != nil:
		if v := *f.number(m); v != nil && *v < 0 {
			errs.Add(f.Name, "must be >= 0")
		}
	default:
		if v := *f.integer(m); v != nil && *v < 0 {
			errs.Add(f.Name, "must be >= 0")
		}
	}
}
