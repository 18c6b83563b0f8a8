package dashboard_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/expd/expd/internal/testenv"
)

var (
	inputTag    = regexp.MustCompile(`<input [^>]*>`)
	selectTag   = regexp.MustCompile(`(?s)<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>`)
	selectedOpt = regexp.MustCompile(`<option(?: value="([^"]*)")? selected>([^<]*)</option>`)
	textareaTag = regexp.MustCompile(`(?s)<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>`)
	attr        = func(tag, name string) (string, bool) {
		m := regexp.MustCompile(` ` + name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return "", strings.Contains(tag, " "+name+">") || strings.Contains(tag, " "+name+" ")
		}
		return html.UnescapeString(m[1]), true
	}
)

// formValues is what a browser would submit for the page's experiment
// form as rendered: every named input, checked box, selected option and
// textarea.
func formValues(t *testing.T, body string) url.Values {
	t.Helper()
	start := strings.Index(body, `<form method="post" action="/experiments/`)
	if start < 0 {
		t.Fatal("no experiment form on the page")
	}
	body = body[start:]
	out := url.Values{}
	for _, tag := range inputTag.FindAllString(body, -1) {
		name, ok := attr(tag, "name")
		if !ok || name == "csrf_token" {
			continue
		}
		typ, _ := attr(tag, "type")
		if typ == "checkbox" {
			if _, checked := attr(tag, "checked"); checked {
				out.Set(name, "on")
			}
			continue
		}
		v, _ := attr(tag, "value")
		out.Set(name, v)
	}
	for _, m := range selectTag.FindAllStringSubmatch(body, -1) {
		if o := selectedOpt.FindStringSubmatch(m[2]); o != nil {
			v := o[1]
			if !strings.Contains(o[0], `value="`) {
				v = o[2]
			}
			out.Set(m[1], html.UnescapeString(v))
		} else if first := regexp.MustCompile(`<option(?: value="([^"]*)")?>([^<]*)</option>`).FindStringSubmatch(m[2]); first != nil {
			v := first[1]
			if !strings.Contains(first[0], `value="`) {
				v = first[2]
			}
			out.Set(m[1], html.UnescapeString(v)) // a browser submits the first option when none is selected
		}
	}
	for _, m := range textareaTag.FindAllStringSubmatch(body, -1) {
		out.Set(m[1], html.UnescapeString(m[2]))
	}
	return out
}

// metricsOf is the experiment's config as the API serves it, without
// what each version changes (version, times, bucket map).
func metricsOf(t *testing.T, env *testenv.Env, org testenv.Org, id string) (version int, config string) {
	t.Helper()
	var got map[string]any
	env.Do(t, http.MethodGet, "/v1/experiments/"+id, nil, testenv.Bearer(org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	version = int(got["version"].(float64))
	for _, k := range []string{"version", "config_version", "updated_at", "created_at", "bucket_map"} {
		delete(got, k)
	}
	b, _ := json.Marshal(got)
	return version, string(b)
}

// Saving the edit form as it is shown keeps every metric's goal,
// guardrail rule and non-inferiority margin, and what the form does not
// show (a custom metric's CUPED switch and MDE, the targeting, the
// inference mode, weights that are not round numbers): the bug was that
// custom metrics lost their guardrail and margin on every save.
func TestFormSavedUnchangedKeepsEveryMetricsRules(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	cfg := map[string]any{
		"name": "form-rules", "salt": "form-rules-salt", "bucket_count": 10000,
		"allocation": []map[string]any{{"variant": "control", "weight": 1}, {"variant": "treatment", "weight": 2}},
		"inference":  "fixed_horizon", "planned_end_date": "2027-01-31", "targeting": map[string]any{"plan": "pro"}, "expected_users": 1234567,
		"metrics": []map[string]any{
			{"name": "latency_ms", "kind": "mean", "category": "guardrail", "method_default": "welch_t", "metric_version": 1, "shared_org_wide": false,
				"source": map[string]any{"event_type": "model_call", "field": "latency_ms"}, "goal": "decrease",
				"guardrail": map[string]any{"max_change": 0.1, "relative": true, "action": "stop"}},
			{"name": "answer_tokens", "kind": "mean", "category": "secondary", "method_default": "welch_t", "metric_version": 2, "shared_org_wide": false,
				"source": map[string]any{"event_type": "model_call", "field": "output_tokens"}, "goal": "decrease", "cuped": false, "mde": 0.05,
				"guardrail":              map[string]any{"bad_direction": "increase", "max_change": 50, "relative": false, "action": "alert"},
				"non_inferiority_margin": map[string]any{"value": 0.02, "type": "relative"}},
		},
	}
	resp := env.Do(t, http.MethodPost, "/v1/experiments", cfg, testenv.Bearer(org.AdminToken)...)
	var created struct{ ID string }
	resp.ExpectJSON(t, http.StatusCreated, &created)
	id := created.ID
	_, before := metricsOf(t, env, org, id)

	v := newVisitor(t, env, org.MemberToken)
	edit := v.get("/experiments/" + id + "/edit")
	expect(t, edit, http.StatusOK, `id="m0-g_max" name="m0-g_max" type="text" inputmode="decimal" value="50"`, `id="m0-ni_value" name="m0-ni_value" type="text" inputmode="decimal" value="0.02"`,
		`id="b-latency_ms-g_max" name="b-latency_ms-g_max" type="text" inputmode="decimal" value="0.1"`)
	form := formValues(t, edit.Body)
	form.Set("action", "save")
	p := v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", p.Status, p.Body)
	}
	version, after := metricsOf(t, env, org, id)
	if version != 2 || after != before {
		t.Fatalf("saving the form unchanged changed the config (version %d):\n%s\nwant\n%s", version, after, before)
	}

	// Edit each rule through the form: a goal and a guardrail on a
	// built-in, the margin of the custom metric.
	form = formValues(t, v.get("/experiments/"+id+"/edit").Body)
	form.Set("b-cost_usd", "on")
	form.Set("b-cost_usd-goal", "decrease")
	form.Set("b-cost_usd-g_action", "alert")
	form.Set("b-cost_usd-g_max", "0.25")
	form.Set("b-cost_usd-g_relative", "on")
	form.Set("m0-ni_value", "0.03")
	form.Set("m0-ni_type", "absolute")
	form.Set("action", "save")
	if p := v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form); p.Status != http.StatusSeeOther {
		t.Fatalf("save rules: %d\n%s", p.Status, p.Body)
	}
	var got struct {
		Metrics []struct {
			Name      string `json:"name"`
			Goal      string `json:"goal"`
			Guardrail *struct {
				BadDirection string  `json:"bad_direction"`
				MaxChange    float64 `json:"max_change"`
				Relative     bool    `json:"relative"`
				Action       string  `json:"action"`
			} `json:"guardrail"`
			Margin *struct {
				Value        float64 `json:"value"`
				Type         string  `json:"type"`
				BadDirection string  `json:"bad_direction"`
			} `json:"non_inferiority_margin"`
		} `json:"metrics"`
	}
	env.Do(t, http.MethodGet, "/v1/experiments/"+id, nil, testenv.Bearer(org.MemberToken)...).ExpectJSON(t, http.StatusOK, &got)
	found := 0
	for _, m := range got.Metrics {
		switch m.Name {
		case "cost_usd":
			if g := m.Guardrail; m.Goal != "decrease" || g == nil || g.BadDirection != "increase" || g.MaxChange != 0.25 || !g.Relative || g.Action != "alert" {
				t.Fatalf("cost_usd as saved: goal %q guardrail %+v", m.Goal, g)
			}
			found++
		case "answer_tokens":
			if nm := m.Margin; nm == nil || nm.Value != 0.03 || nm.Type != "absolute" || nm.BadDirection != "increase" || m.Guardrail == nil {
				t.Fatalf("answer_tokens as saved: margin %+v guardrail %+v", nm, m.Guardrail)
			}
			found++
		}
	}
	if found != 2 {
		t.Fatalf("metrics after the edit: %+v", got.Metrics)
	}

	// Bad values come back on their field, and nothing is saved: one that
	// does not parse, one the domain refuses (a bad direction that
	// contradicts the goal).
	form.Set("m0-ni_value", "two percent")
	form.Set("b-cost_usd-g_bad", "decrease")
	p = v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	expect(t, p, http.StatusUnprocessableEntity, `id="m0-ni_value-err"><p class="field-error">must be a number`)
	form.Set("m0-ni_value", "0.03")
	p = v.post("/experiments/"+id+"/edit", "/experiments/"+id+"/edit", form)
	expect(t, p, http.StatusUnprocessableEntity, `id="b-cost_usd-g_bad-err"><p class="field-error">contradicts the metric&#39;s goal`, `<details class="rules" open>`)
	if version, _ := metricsOf(t, env, org, id); version != 3 {
		t.Fatalf("a refused form stored version %d", version)
	}
}
