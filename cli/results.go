package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
)

// resultsBody is the part of GET .../results the table shows.
type resultsBody struct {
	ExperimentID  string   `json:"experiment_id"`
	ComputedFor   string   `json:"computed_for"`
	Kind          string   `json:"kind"`
	AvailableDays []string `json:"available_days"`
	SRMGate       string   `json:"srm_gate"`
	Preliminary   bool     `json:"preliminary"`
	Window        struct {
		Days int `json:"days"`
	} `json:"window"`
	Metrics []metricRow `json:"metrics"`
	Verdict struct {
		Recommendation string `json:"recommendation"`
		Variant        string `json:"variant"`
		Reasons        []struct {
			Code    string `json:"code"`
			Metric  string `json:"metric"`
			Variant string `json:"variant"`
		} `json:"reasons"`
		DaysToMDE *float64 `json:"days_to_mde"`
	} `json:"verdict"`
}

type metricRow struct {
	Metric      string           `json:"metric"`
	Variant     string           `json:"variant"`
	Control     string           `json:"control_variant"`
	Test        string           `json:"test"`
	PValue      float64          `json:"p_value"`
	PValueFDR   float64          `json:"p_value_fdr"`
	Effect      float64          `json:"effect"`
	CILow       float64          `json:"ci_low"`
	CIHigh      float64          `json:"ci_high"`
	NPerArm     map[string]int64 `json:"n_per_arm"`
	Preliminary bool             `json:"preliminary"`
	Undefined   string           `json:"undefined"`
	Goal        string           `json:"goal"`
	Judgement   struct {
		Outcome       string `json:"outcome"`
		HeldBackByFDR bool   `json:"held_back_by_fdr"`
	} `json:"judgement"`
}

func runResults(ctx context.Context, e *env, args []string) error {
	fs := e.flags("")
	day := fs.String("day", "", "a nightly day (YYYY-MM-DD) or a manual run (manual-<instant>); default: the latest")
	pos, c, err := e.setup(fs, args, 1, "EXPERIMENT: name or id")
	if err != nil {
		return err
	}
	path := experimentPath(pos[0]) + "/results"
	if *day != "" {
		path += "?day=" + url.QueryEscape(*day)
	}
	return showGet(ctx, e, c, path, "results", pos[0], printResults)
}

// showGet GETs path and prints the answer: as JSON, or decoded into T
// and written by print as a table.
func showGet[T any](ctx context.Context, e *env, c *Client, path, what, name string, print func(io.Writer, string, T) error) error {
	var raw json.RawMessage
	if err := c.Do(ctx, "GET", path, nil, &raw); err != nil {
		return err
	}
	if !e.table() {
		_, err := fmt.Fprintf(e.io.Stdout, "%s\n", raw)
		return err
	}
	var body T
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("unexpected %s body: %w", what, err)
	}
	return print(e.io.Stdout, name, body)
}

// printResults writes the results table, then one CI plot per metric.
func printResults(w io.Writer, name string, res resultsBody) error {
	fmt.Fprintf(w, "%s: results for %s (%s), window %d days, SRM %s%s\n\n", name, res.ComputedFor, res.Kind,
		res.Window.Days, orDefault(res.SRMGate, "-"), map[bool]string{true: ", preliminary", false: ""}[res.Preliminary])
	fmt.Fprintf(w, "verdict: %s\n\n", verdictLine(res))
	tw := newTable(w, "METRIC", "VARIANT", "N", "EFFECT", "95% CI", "P", "FDR P", "TEST", "DECISION")
	for _, m := range res.Metrics {
		n := fmt.Sprintf("%d/%d", m.NPerArm[m.Control], m.NPerArm[m.Variant])
		if m.Undefined != "" {
			row(tw, m.Metric, m.Variant+" vs "+m.Control, n, "-", "-", "-", "-", m.Test, decision(m, res.SRMGate))
			continue
		}
		row(tw, m.Metric, m.Variant+" vs "+m.Control, n, signed(m.Effect), "["+num(m.CILow)+", "+num(m.CIHigh)+"]",
			pval(m.PValue), pval(m.PValueFDR), m.Test, decision(m, res.SRMGate))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, metric := range metricOrder(res.Metrics) {
		fmt.Fprintf(w, "\n%s: effect and 95%% CI (| is zero)\n", metric)
		var rows []metricRow
		for _, m := range res.Metrics {
			if m.Metric == metric && m.Undefined == "" {
				rows = append(rows, m)
			}
		}
		fmt.Fprint(w, ciPlot(rows, plotWidth))
	}
	if len(res.AvailableDays) > 1 {
		fmt.Fprintf(w, "\nother runs (--day): %s\n", strings.Join(res.AvailableDays[1:], ", "))
	}
	return nil
}

// verdictLine is the run's recommendation in one line: what to do, and why.
func verdictLine(res resultsBody) string {
	v := res.Verdict
	if v.Recommendation == "" {
		return "-"
	}
	out := strings.ToUpper(strings.ReplaceAll(v.Recommendation, "_", " "))
	if v.Variant != "" {
		out += " " + v.Variant
	}
	var why []string
	for _, r := range v.Reasons {
		part := strings.ReplaceAll(r.Code, "_", " ")
		if r.Metric != "" {
			part += ": " + r.Metric
		}
		if r.Variant != "" && r.Variant != v.Variant {
			part += " (" + r.Variant + ")"
		}
		why = append(why, part)
	}
	if len(why) > 0 {
		out += " — " + strings.Join(why, "; ")
	}
	if v.DaysToMDE != nil {
		out += fmt.Sprintf("; about %g more days to reach the minimum detectable effect", *v.DaysToMDE)
	}
	return out
}

// decision says in words what a row supports: good or bad by the metric's
// goal, on the interval the row shows (the server's judgement).
func decision(m metricRow, srmGate string) string {
	var d string
	switch {
	case m.Undefined != "":
		return "undefined: " + m.Undefined
	case srmGate == "fail":
		d = "do not trust: sample ratio mismatch"
	case m.Judgement.Outcome == "better" || m.Judgement.Outcome == "worse":
		d = m.Judgement.Outcome + " (goal: " + m.Goal + ")"
	case m.Judgement.Outcome == "higher" || m.Judgement.Outcome == "lower":
		d = m.Judgement.Outcome + " (direction not set: add a goal)"
	case m.Judgement.HeldBackByFDR:
		d = "inconclusive after the FDR correction"
	default:
		d = "inconclusive"
	}
	if m.Preliminary {
		d += " (preliminary)"
	}
	return d
}

func signed(v float64) string {
	if v > 0 {
		return "+" + num(v)
	}
	return num(v)
}

func metricOrder(rows []metricRow) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range rows {
		if !seen[m.Metric] {
			seen[m.Metric] = true
			out = append(out, m.Metric)
		}
	}
	return out
}

// plotWidth is the number of columns of a CI plot's axis.
const plotWidth = 41

// ciPlot draws each variant's CI as [---o---] on one axis shared by the
// metric's rows, with zero marked |, and the axis ends labelled:
//
//	b  |      [----o----]   |
//	   -0.012           0.031
func ciPlot(rows []metricRow, width int) string {
	if len(rows) == 0 {
		return "  (no computable rows)\n"
	}
	lo, hi := 0.0, 0.0
	labelW := 0
	for _, m := range rows {
		lo, hi = math.Min(lo, m.CILow), math.Max(hi, m.CIHigh)
		labelW = max(labelW, len(m.Variant))
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	col := func(x float64) int {
		c := int(math.Round((x - lo) / (hi - lo) * float64(width-1)))
		return min(max(c, 0), width-1)
	}
	var b strings.Builder
	for _, m := range rows {
		line := []rune(strings.Repeat(" ", width))
		l, r := col(m.CILow), col(m.CIHigh)
		for i := l; i <= r; i++ {
			line[i] = '-'
		}
		line[col(0)] = '|'
		line[l], line[r] = '[', ']'
		line[col(m.Effect)] = 'o'
		fmt.Fprintf(&b, "  %-*s %s\n", labelW, m.Variant, string(line))
	}
	left, right := num(lo), num(hi)
	gap := max(width-len(left)-len(right), 1)
	fmt.Fprintf(&b, "  %-*s %s%s%s\n", labelW, "", left, strings.Repeat(" ", gap), right)
	return b.String()
}
