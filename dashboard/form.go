package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/assignments"
	"github.com/expd/expd/bucketing"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/metrics"
	"github.com/expd/expd/power"
	"github.com/expd/expd/stats"
	"github.com/expd/expd/validate"
	"github.com/expd/expd/vocab"
)

// Rows a form offers beyond those in use, so a variant or a metric can be
// added without script.
const (
	spareVariants = 1
	spareMetrics  = 1
	maxFormRows   = experiments.MaxVariants + experiments.MaxMetrics
)

// formData is the experiment form: what was typed, and the errors the
// domain validation reported, keyed by the id of the input they concern.
type formData struct {
	Edit        bool
	ID          string
	Version     int
	Name        string
	Description string
	Salt        string
	BucketCount string
	Control     string
	Status      string
	// ExpectedUsers is expected_users as typed; TuningFixed makes it
	// read-only (the experiment has started: N* is fixed).
	ExpectedUsers string
	TuningFixed   bool
	Variants      []variantRow
	Builtins      []builtinRow
	Custom        []metricRow
	Errors        map[string][]string
	Summary       []fieldMessage // every error, for the list at the top
	Preview       *preview

	Statuses, Kinds, Categories, Methods, EventTypes []string
	Goals, Directions, GuardrailActions, MarginTypes []string
}

type variantRow struct {
	Name, Weight, Prompt, Variables string
}

type builtinRow struct {
	experiments.Metric
	Checked bool
	Rules   metricRules
}

type metricRow struct {
	Name, Kind, Category, Method, Version, EventType, Field, BusinessMetric string
	Shared                                                                  bool
	Rules                                                                   metricRules
}

// metricRules are the inputs every metric, built-in or custom, has beyond
// its definition: the goal (the direction in which it gets better), a
// guardrail rule (GAction "": none) and a non-inferiority margin
// (NIValue "": none), as typed.
type metricRules struct {
	Goal                   string
	GAction, GBad, GMax    string
	GRelative              bool
	NIValue, NIType, NIBad string
}

// rulesOf shows a metric's goal, guardrail and margin in the form.
func rulesOf(m experiments.Metric) metricRules {
	r := metricRules{Goal: m.Goal, NIType: experiments.MarginRelative}
	if g := m.Guardrail; g != nil {
		r.GAction, r.GBad, r.GMax, r.GRelative = g.Action, g.BadDirection, exactNum(g.MaxChange), g.Relative
	}
	if nm := m.NonInferiorityMargin; nm != nil {
		r.NIValue, r.NIType, r.NIBad = exactNum(nm.Value), nm.Type, nm.BadDirection
	}
	return r
}

// readRules takes the rule inputs of the metric whose inputs start with p.
func readRules(c *gin.Context, p string) metricRules {
	return metricRules{Goal: c.PostForm(p + "goal"),
		GAction: c.PostForm(p + "g_action"), GBad: c.PostForm(p + "g_bad"), GMax: strings.TrimSpace(c.PostForm(p + "g_max")),
		GRelative: c.PostForm(p+"g_relative") == "on",
		NIValue:   strings.TrimSpace(c.PostForm(p + "ni_value")), NIType: c.PostForm(p + "ni_type"), NIBad: c.PostForm(p + "ni_bad")}
}

// apply sets m's goal, guardrail and margin from the form; an input that
// does not parse is reported on it (p is its id prefix). The rest is left
// to the domain validation.
func (r metricRules) apply(f *formData, p string, m *experiments.Metric) {
	m.Goal, m.Guardrail, m.NonInferiorityMargin = r.Goal, nil, nil
	if r.GAction != "" {
		g := &experiments.Guardrail{Action: r.GAction, BadDirection: r.GBad, Relative: r.GRelative}
		if v, err := strconv.ParseFloat(r.GMax, 64); err == nil {
			g.MaxChange = v
		} else {
			f.addError(p+"g_max", "must be a number (the change allowed in the bad direction; a fraction of control when relative: 0.05 is 5%)")
		}
		m.Guardrail = g
	}
	if r.NIValue != "" {
		nm := &experiments.Margin{Type: r.NIType, BadDirection: r.NIBad}
		if v, err := strconv.ParseFloat(r.NIValue, 64); err == nil {
			nm.Value = v
		} else {
			f.addError(p+"ni_value", "must be a number (how much worse the treatment may be; a fraction of control when relative)")
		}
		m.NonInferiorityMargin = nm
	}
}

type fieldMessage struct{ ID, Text string }

// E lists the errors of one input.
func (f *formData) E(id string) []string { return f.Errors[id] }

// Described is the aria-describedby value of an input with errors.
func (f *formData) Described(id string) string {
	if len(f.Errors[id]) == 0 {
		return ""
	}
	return id + "-err"
}

func (f *formData) addError(id, text string) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[id] = append(f.Errors[id], text)
	f.Summary = append(f.Summary, fieldMessage{ID: id, Text: text})
}

func newForm() *formData {
	f := &formData{Status: experiments.StatusRunning, BucketCount: "10000",
		Statuses: []string{experiments.StatusDraft, experiments.StatusRunning, experiments.StatusStopped},
		Kinds:    vocab.Strings(vocab.KindNames(true)), Categories: []string{"primary", "secondary", "guardrail"},
		Methods:          vocab.Strings(stats.Methods),
		EventTypes:       vocab.Strings(vocab.RecordTypes),
		Goals:            []string{"", experiments.GoalIncrease, experiments.GoalDecrease},
		Directions:       []string{"", experiments.GuardrailIncrease, experiments.GuardrailDecrease},
		GuardrailActions: []string{"", experiments.GuardrailStop, experiments.GuardrailAlert},
		MarginTypes:      []string{experiments.MarginRelative, experiments.MarginAbsolute},
	}
	for _, m := range metrics.Builtins() {
		f.Builtins = append(f.Builtins, builtinRow{Metric: m, Rules: rulesOf(m)})
	}
	return f
}

// fill shows a stored config in the form.
func (f *formData) fill(cfg experiments.Config) {
	f.Name, f.Description, f.Salt, f.Control, f.Status = cfg.Name, cfg.Description, cfg.Salt, cfg.Control, cfg.Status
	f.BucketCount = strconv.FormatUint(uint64(cfg.BucketCount), 10)
	if cfg.ExpectedUsers != nil {
		f.ExpectedUsers = exactNum(*cfg.ExpectedUsers)
	}
	for _, s := range cfg.Allocation {
		row := variantRow{Name: s.Variant, Weight: exactNum(s.Weight)}
		if v, ok := cfg.Variants[s.Variant]; ok {
			row.Prompt = v.Prompt
			if len(v.Variables) > 0 {
				b, _ := json.MarshalIndent(v.Variables, "", "  ")
				row.Variables = string(b)
			}
		}
		f.Variants = append(f.Variants, row)
	}
	for _, m := range cfg.Metrics {
		if i := f.builtinIndex(m.Name); i >= 0 {
			f.Builtins[i].Checked, f.Builtins[i].Rules = true, rulesOf(m)
			continue
		}
		row := metricRow{Name: m.Name, Kind: string(m.Kind), Category: m.Category, Method: m.MethodDefault,
			Version: strconv.Itoa(m.MetricVersion), Shared: m.SharedOrgWide != nil && *m.SharedOrgWide, Rules: rulesOf(m)}
		if m.Source != nil {
			row.EventType, row.Field, row.BusinessMetric = string(m.Source.EventType), m.Source.Field, m.Source.BusinessMetric
		}
		f.Custom = append(f.Custom, row)
	}
}

func (f *formData) builtinIndex(name string) int {
	for i, b := range f.Builtins {
		if b.Name == name {
			return i
		}
	}
	return -1
}

// addSpares appends the empty rows the form offers.
func (f *formData) addSpares() {
	for range spareVariants {
		f.Variants = append(f.Variants, variantRow{})
	}
	if len(f.Variants) < 2 {
		f.Variants = append(f.Variants, variantRow{})
	}
	for range spareMetrics {
		f.Custom = append(f.Custom, metricRow{Kind: string(vocab.Mean), Category: "secondary", Method: string(stats.WelchT), Version: "1",
			EventType: string(vocab.TypeModelCall), Rules: metricRules{NIType: experiments.MarginRelative}})
	}
}

// read takes the posted form; empty rows are dropped.
func (f *formData) read(c *gin.Context) {
	f.Name, f.Description = strings.TrimSpace(c.PostForm("name")), c.PostForm("description")
	f.Salt, f.BucketCount = strings.TrimSpace(c.PostForm("salt")), strings.TrimSpace(c.PostForm("bucket_count"))
	f.Control, f.Status = strings.TrimSpace(c.PostForm("control")), c.PostForm("status")
	f.ExpectedUsers = strings.TrimSpace(c.PostForm("expected_users"))
	f.Variants, f.Custom = nil, nil
	for i := range maxFormRows {
		p := fmt.Sprintf("v%d-", i)
		row := variantRow{Name: strings.TrimSpace(c.PostForm(p + "name")), Weight: strings.TrimSpace(c.PostForm(p + "weight")),
			Prompt: c.PostForm(p + "prompt"), Variables: strings.TrimSpace(c.PostForm(p + "variables"))}
		if row != (variantRow{}) {
			f.Variants = append(f.Variants, row)
		}
	}
	for i := range f.Builtins {
		f.Builtins[i].Checked = c.PostForm("b-"+f.Builtins[i].Name) == "on"
		f.Builtins[i].Rules = readRules(c, "b-"+f.Builtins[i].Name+"-")
	}
	for i := range maxFormRows {
		p := fmt.Sprintf("m%d-", i)
		row := metricRow{Name: strings.TrimSpace(c.PostForm(p + "name")), Kind: c.PostForm(p + "kind"), Category: c.PostForm(p + "category"),
			Method: c.PostForm(p + "method"), Version: strings.TrimSpace(c.PostForm(p + "version")), Shared: c.PostForm(p+"shared") == "on",
			EventType: c.PostForm(p + "event_type"), Field: strings.TrimSpace(c.PostForm(p + "field")), BusinessMetric: strings.TrimSpace(c.PostForm(p + "business_metric")),
			Rules: readRules(c, p)}
		if row.Name != "" {
			f.Custom = append(f.Custom, row)
		}
	}
}

// config builds the ExperimentConfig the form describes. Inputs that do
// not parse are reported on the form; everything else is left to the
// domain validation (experiments.Config.Validate), the API's own. keys
// maps each metric's index in the config to its form row.
func (f *formData) config(prev *experiments.Config) (experiments.Config, []string) {
	cfg := experiments.Config{Name: f.Name, Description: f.Description, Salt: f.Salt, Control: f.Control, Status: f.Status,
		Allocation: []bucketing.Slice{}, Variants: map[string]experiments.Variant{}, Metrics: []experiments.Metric{}}
	if prev != nil {
		// What the form does not show stays as stored: a save must not
		// drop the targeting, the inference mode or the schedule.
		cfg.Targeting, cfg.Inference, cfg.PlannedEndDate, cfg.SequentialTuning = prev.Targeting, prev.Inference, prev.PlannedEndDate, prev.SequentialTuning
		cfg.StartAt, cfg.StopAt = prev.StartAt, prev.StopAt
	}
	if n, err := strconv.ParseUint(f.BucketCount, 10, 32); err == nil {
		cfg.BucketCount = uint32(n)
	} else if f.BucketCount != "" {
		f.addError("bucket_count", "must be a whole number")
	}
	if f.ExpectedUsers != "" {
		if n, err := strconv.ParseFloat(f.ExpectedUsers, 64); err == nil {
			cfg.ExpectedUsers = &n
		} else {
			f.addError("expected_users", "must be a whole number of users")
		}
	}
	for i, v := range f.Variants {
		w, err := strconv.ParseFloat(v.Weight, 64)
		if err != nil {
			f.addError(fmt.Sprintf("v%d-weight", i), "must be a number (a relative weight)")
		}
		cfg.Allocation = append(cfg.Allocation, bucketing.Slice{Variant: v.Name, Weight: w})
		var vars map[string]any
		if v.Variables != "" {
			if err := json.Unmarshal([]byte(v.Variables), &vars); err != nil {
				f.addError(fmt.Sprintf("v%d-variables", i), "must be a JSON object, like {\"temperature\": 0.2}")
			}
		}
		if v.Prompt != "" || len(vars) > 0 {
			cfg.Variants[v.Name] = experiments.Variant{Prompt: v.Prompt, Variables: vars}
		}
	}
	var keys []string
	for _, b := range f.Builtins {
		if !b.Checked {
			continue
		}
		m := b.Metric
		if pm, ok := stored(prev, m.Name); ok { // keep the version an experiment already measures
			m = pm
		}
		b.Rules.apply(f, "b-"+b.Name+"-", &m)
		cfg.Metrics = append(cfg.Metrics, m)
		keys = append(keys, "b-"+b.Name)
	}
	for i, r := range f.Custom {
		// What the form does not show (CUPED, quantile, denominator, MDE,
		// a score source) stays as stored; what it shows is as typed.
		m, _ := stored(prev, r.Name)
		var kept *experiments.MetricSource
		if m.Source != nil && string(m.Source.EventType) == r.EventType {
			kept = m.Source
		}
		shared := r.Shared
		m.Name, m.Kind, m.Category, m.MethodDefault, m.SharedOrgWide, m.Source = r.Name, vocab.Kind(r.Kind), r.Category, r.Method, &shared, nil
		m.MetricVersion = 0
		if n, err := strconv.Atoi(r.Version); err == nil {
			m.MetricVersion = n
		}
		if r.EventType != "" {
			m.Source = &experiments.MetricSource{EventType: vocab.RecordType(r.EventType), Field: r.Field, BusinessMetric: r.BusinessMetric}
			if kept != nil {
				m.Source.Score, m.Source.ScoreSource = kept.Score, kept.ScoreSource
			}
		}
		r.Rules.apply(f, fmt.Sprintf("m%d-", i), &m)
		cfg.Metrics = append(cfg.Metrics, m)
		keys = append(keys, fmt.Sprintf("m%d", i))
	}
	if len(cfg.Variants) == 0 {
		cfg.Variants = nil
	}
	return cfg, keys
}

// stored is the metric of that name in the stored config prev (nil: a
// new experiment).
func stored(prev *experiments.Config, name string) (experiments.Metric, bool) {
	if prev != nil {
		for _, pm := range prev.Metrics {
			if pm.Name == name {
				return pm, true
			}
		}
	}
	return experiments.Metric{}, false
}

var (
	allocationField = regexp.MustCompile(`^allocation\[(\d+)\]\.?(\w*)`)
	metricField     = regexp.MustCompile(`^metrics\[(\d+)\]\.(?:source\.)?([\w.]+)`)
)

// ruleInputs maps the rule fields of a metric (as problem+json names them)
// to the suffix of their input's id.
var ruleInputs = map[string]string{
	"goal":                                 "goal",
	"guardrail":                            "g_action",
	"guardrail.action":                     "g_action",
	"guardrail.bad_direction":              "g_bad",
	"guardrail.max_change":                 "g_max",
	"guardrail.relative":                   "g_relative",
	"non_inferiority_margin":               "ni_value",
	"non_inferiority_margin.value":         "ni_value",
	"non_inferiority_margin.type":          "ni_type",
	"non_inferiority_margin.bad_direction": "ni_bad",
}

// showErrors places the domain's field errors next to their inputs.
func (f *formData) showErrors(err error, metricKeys []string) {
	for _, fe := range validate.Fields(err) {
		f.addError(f.inputOf(fe.Field, metricKeys), fe.Reason)
	}
}

// inputOf maps a config field path (as problem+json names it) to the id
// of the form input that holds it.
func (f *formData) inputOf(field string, metricKeys []string) string {
	if m := allocationField.FindStringSubmatch(field); m != nil {
		i, _ := strconv.Atoi(m[1])
		if m[2] == "weight" {
			return fmt.Sprintf("v%d-weight", i)
		}
		return fmt.Sprintf("v%d-name", i)
	}
	if rest, ok := strings.CutPrefix(field, "variants."); ok {
		for i, v := range f.Variants {
			if tail, ok := strings.CutPrefix(rest, v.Name); ok && v.Name != "" {
				switch tail {
				case ".prompt":
					return fmt.Sprintf("v%d-prompt", i)
				case ".variables":
					return fmt.Sprintf("v%d-variables", i)
				}
				return fmt.Sprintf("v%d-name", i)
			}
		}
		return "allocation"
	}
	if m := metricField.FindStringSubmatch(field); m != nil {
		i, _ := strconv.Atoi(m[1])
		if i >= len(metricKeys) {
			return "metrics"
		}
		key := metricKeys[i]
		if id, ok := ruleInputs[m[2]]; ok {
			return key + "-" + id
		}
		if strings.HasPrefix(key, "b-") {
			return key
		}
		name, _, _ := strings.Cut(m[2], ".")
		switch name {
		case "method_default":
			return key + "-method"
		case "metric_version":
			return key + "-version"
		case "shared_org_wide":
			return key + "-shared"
		}
		return key + "-" + name
	}
	switch field {
	case "name", "description", "salt", "bucket_count", "control", "status", "allocation", "metrics", "expected_users":
		return field
	}
	return "form"
}

// GET /experiments/new
func (d *Dashboard) newPage(c *gin.Context) {
	f := newForm()
	f.Salt = randomSalt()
	f.Variants = []variantRow{{Name: "control", Weight: "50"}, {Name: "treatment", Weight: "50"}}
	// Prefilled with the org's recent traffic, the users a power answer
	// for a draft plans with (docs/power.md); none yet: left empty.
	recent, err := power.Reader{DB: d.deps.DB, Aggregator: d.deps.Aggregator}.RecentUsers(c.Request.Context(), orgID(c), time.Now().UTC())
	if err != nil {
		d.fail(c, err)
		return
	}
	if recent >= experiments.MinSequentialTuning {
		f.ExpectedUsers = strconv.FormatInt(min(recent, experiments.MaxSequentialTuning), 10)
	}
	f.addSpares()
	d.render(c, http.StatusOK, "form", "New experiment", "experiments", f)
}

// POST /experiments/new creates the experiment through the same store and
// validation as POST /v1/experiments.
func (d *Dashboard) createPost(c *gin.Context) {
	f := newForm()
	f.read(c)
	cfg, keys := f.config(nil)
	if len(f.Summary) == 0 {
		exp, err := d.deps.UseCases.CreateExperiment(c.Request.Context(), orgID(c), session(c).UserID, cfg)
		if err == nil {
			c.Redirect(http.StatusSeeOther, "/experiments/"+exp.ID)
			return
		}
		if !f.storeError(err, keys) {
			d.fail(c, err)
			return
		}
	}
	f.addSpares()
	d.render(c, http.StatusUnprocessableEntity, "form", "New experiment", "experiments", f)
}

// storeError shows a store error on the form; false when it is not the
// user's to fix.
func (f *formData) storeError(err error, keys []string) bool {
	switch {
	case errors.Is(err, experiments.ErrNameTaken):
		f.addError("name", "already used by another experiment of this org")
	case validate.Fields(err) != nil:
		f.showErrors(err, keys)
	default:
		return false
	}
	return true
}

// GET /experiments/:id/edit
func (d *Dashboard) editPage(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	f := newForm()
	f.Edit, f.ID, f.Version = true, exp.ID, exp.Version
	f.TuningFixed = experiments.TuningFixed(exp.Status)
	f.fill(exp.Config)
	f.addSpares()
	d.render(c, http.StatusOK, "form", "Edit "+exp.Name, "experiments", f)
}

// POST /experiments/:id/edit: action=preview shows the diff against the
// latest version and what a weight change moves; action=save stores the
// next version through the same store as PUT /v1/experiments/:id.
func (d *Dashboard) editPost(c *gin.Context) {
	ctx := c.Request.Context()
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	f := newForm()
	f.Edit, f.ID, f.Version = true, exp.ID, exp.Version
	f.TuningFixed = experiments.TuningFixed(exp.Status)
	f.read(c)
	// Frozen bucketing inputs are shown read-only; the stored ones count.
	f.Salt, f.BucketCount = exp.Salt, strconv.FormatUint(uint64(exp.BucketCount), 10)
	cfg, keys := f.config(&exp.Config)
	if len(f.Summary) == 0 {
		if err := cfg.Validate(); err != nil {
			f.showErrors(err, keys)
		}
	}
	if len(f.Summary) == 0 && c.PostForm("action") == "save" {
		saved, err := d.deps.UseCases.UpdateExperiment(ctx, orgID(c), exp.ID, session(c).UserID, cfg)
		if err == nil {
			c.Redirect(http.StatusSeeOther, fmt.Sprintf("/experiments/%s/history#v%d", saved.ID, saved.Version))
			return
		}
		if !f.storeError(err, keys) {
			d.fail(c, err)
			return
		}
	}
	status := http.StatusOK
	if len(f.Summary) > 0 {
		status = http.StatusUnprocessableEntity
	} else {
		pinned, err := assignments.CountPinned(ctx, d.deps.DB, orgID(c), exp.ID)
		if err != nil {
			d.fail(c, err)
			return
		}
		p, err := previewChange(exp, cfg, pinned)
		if err != nil {
			f.addError("allocation", err.Error())
			status = http.StatusUnprocessableEntity
		} else {
			f.Preview = &p
		}
	}
	f.addSpares()
	d.render(c, status, "form", "Edit "+exp.Name, "experiments", f)
}

// randomSalt proposes a salt for a new experiment.
func randomSalt() string { return strings.NewReplacer("-", "x", "_", "y").Replace(randomToken(12)) }

// ruleView is what the "rules" template of form.html shows: one metric's
// rule inputs, whose ids start with P.
type ruleView struct {
	F *formData
	P string
	R metricRules
}

// RulesOf hands the "rules" template a metric's rule inputs.
func (f *formData) RulesOf(prefix string, r metricRules) ruleView {
	return ruleView{F: f, P: prefix, R: r}
}

// HasRuleErrors tells whether an input whose id starts with prefix has an
// error, so its collapsed rules open.
func (f *formData) HasRuleErrors(prefix string) bool {
	for id := range f.Errors {
		if strings.HasPrefix(id, prefix) {
			return true
		}
	}
	return false
}

// exactNum shows a stored number in an input exactly (fmtNum rounds for
// reading), so saving the form unchanged stores the same number.
func exactNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
