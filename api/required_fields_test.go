package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/internal/testenv"
)

// Every required field of the request schemas of the spec's part 2
// (ExperimentConfig, AllocationSlice, MetricDefinition, Event,
// AssignRequest), each missing, null and zero: missing and null are a 4xx
// naming the field by its path; zero is refused where zero is not a valid
// value and accepted where it is (a weight of 0, shared_org_wide false, an
// empty metrics list).
func TestRequiredFieldsMissingNullZero(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	const (
		missing = iota
		null
		zero
	)
	kinds := []string{"missing", "null", "zero"}

	type target struct {
		schema string
		path   []string // where the field sits, from the body's root
		zero   any
		zeroOK bool // the zero value is valid
		field  string
	}
	// PUT may leave out the frozen bucketing inputs: the stored ones stay.
	keptOnPUT := map[string]bool{"salt": true, "bucket_count": true}
	targets := []target{
		{"ExperimentConfig", []string{"name"}, "", false, "name"},
		{"ExperimentConfig", []string{"salt"}, "", false, "salt"},
		{"ExperimentConfig", []string{"bucket_count"}, 0, false, "bucket_count"},
		{"ExperimentConfig", []string{"allocation"}, []any{}, false, "allocation"},
		{"ExperimentConfig", []string{"metrics"}, []any{}, true, "metrics"},
		{"AllocationSlice", []string{"allocation", "1", "variant"}, "", false, "allocation[1].variant"},
		{"AllocationSlice", []string{"allocation", "1", "weight"}, 0, true, "allocation[1].weight"},
		{"MetricDefinition", []string{"metrics", "0", "name"}, "", false, "metrics[0].name"},
		{"MetricDefinition", []string{"metrics", "0", "kind"}, "", false, "metrics[0].kind"},
		{"MetricDefinition", []string{"metrics", "0", "category"}, "", false, "metrics[0].category"},
		{"MetricDefinition", []string{"metrics", "0", "method_default"}, "", false, "metrics[0].method_default"},
		{"MetricDefinition", []string{"metrics", "0", "metric_version"}, 0, false, "metrics[0].metric_version"},
		{"MetricDefinition", []string{"metrics", "0", "shared_org_wide"}, false, true, "metrics[0].shared_org_wide"},
	}
	n := 0
	for _, tg := range targets {
		for kind := missing; kind <= zero; kind++ {
			for _, method := range []string{http.MethodPost, http.MethodPut} {
				n++
				name := strings.Join([]string{tg.schema, tg.field, kinds[kind], method}, " ")
				t.Run(name, func(t *testing.T) {
					cfg := roundTrip(t, validConfig("req-"+uuid.NewString()[:8]))
					path := "/v1/experiments"
					if method == http.MethodPut {
						created := create(t, env, org, roundTrip(t, cfg))
						path += "/" + created.ID
					}
					set(t, cfg, tg.path, kind, tg.zero)
					r := env.Do(t, method, path, cfg, admin...)
					if (kind == zero && tg.zeroOK) || (method == http.MethodPut && keptOnPUT[tg.field]) {
						if r.Status != http.StatusCreated && r.Status != http.StatusOK {
							t.Fatalf("zero %s refused: %d %s", tg.field, r.Status, r.Body)
						}
						return
					}
					p := testenv.ExpectProblem(t, r, http.StatusBadRequest)
					if !p.HasFieldError(tg.field) {
						t.Fatalf("%s: no field error on %s: %s", name, tg.field, r.Body)
					}
				})
			}
		}
	}

	// POST /v1/metrics: the same MetricDefinition, version minted by the server.
	for _, f := range []string{"name", "kind", "category", "method_default", "shared_org_wide"} {
		for kind := missing; kind <= null; kind++ {
			m := map[string]any{"name": "tokens_out", "kind": "mean", "category": "secondary", "method_default": "welch_t", "shared_org_wide": true,
				"source": map[string]any{"event_type": "model_call", "field": "output_tokens"}}
			set(t, m, []string{f}, kind, nil)
			p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/metrics", m, admin...), http.StatusBadRequest)
			if !p.HasFieldError(f) {
				t.Fatalf("metric %s %s: %+v", f, kinds[kind], p)
			}
		}
	}

	// Event: a bad event is rejected alone, its reason naming the field.
	exp := create(t, env, org, validConfig("req-events"))
	for _, f := range []string{"event_id", "type", "experiment_id", "user_id", "timestamp"} {
		for kind := missing; kind <= zero; kind++ {
			ev := map[string]any{"event_id": uuid.NewString(), "type": "exposure", "experiment_id": exp.ID, "user_id": "u1",
				"variant": "control", "timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
			set(t, ev, []string{f}, kind, "")
			r := env.Do(t, http.MethodPost, "/v1/events", map[string]any{"events": []any{ev}}, testenv.APIKey(org.PublishableKey)...)
			var ack struct {
				Accepted int `json:"accepted"`
				Rejected []struct {
					Reason string `json:"reason"`
				} `json:"rejected"`
			}
			r.JSON(t, &ack)
			if r.Status != http.StatusAccepted || ack.Accepted != 0 || len(ack.Rejected) != 1 || !strings.HasPrefix(ack.Rejected[0].Reason, f+":") {
				t.Fatalf("event %s %s: %d %s", f, kinds[kind], r.Status, r.Body)
			}
			n++
		}
	}

	// AssignRequest.
	for _, f := range []string{"experiment_id", "user_id"} {
		for kind := missing; kind <= zero; kind++ {
			req := map[string]any{"experiment_id": exp.ID, "user_id": "u1"}
			set(t, req, []string{f}, kind, "")
			p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/assign", req, testenv.APIKey(org.PublishableKey)...), http.StatusBadRequest)
			if !p.HasFieldError(f) {
				t.Fatalf("assign %s %s: %+v", f, kinds[kind], p)
			}
			n++
		}
	}
	t.Logf("%d required-field cases", n+10)
}

// roundTrip turns a body into plain JSON maps and slices, so set can walk it.
func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// set removes the field at path (kind 0), sets it to null (1) or to zero (2).
func set(t *testing.T, root map[string]any, path []string, kind int, zero any) {
	t.Helper()
	var cur any = root
	for _, p := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			i := 0
			for _, ch := range p {
				i = i*10 + int(ch-'0')
			}
			cur = c[i]
		}
	}
	obj := cur.(map[string]any)
	last := path[len(path)-1]
	switch kind {
	case 0:
		delete(obj, last)
	case 1:
		obj[last] = nil
	default:
		obj[last] = zero
	}
}
