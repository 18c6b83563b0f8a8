package api_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/metrics"
)

func TestSharedMetricRoutes(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	auth := testenv.Bearer(org.MemberToken)
	def := map[string]any{"name": "tokens_out", "kind": "mean", "category": "guardrail", "method_default": "welch_t",
		"metric_version": 1, "shared_org_wide": true, "source": map[string]any{"event_type": "model_call", "field": "output_tokens"}}
	for want := 1; want <= 2; want++ {
		resp := env.Do(t, http.MethodPost, "/v1/metrics", def, auth...)
		var got struct {
			MetricVersion int  `json:"metric_version"`
			Shared        bool `json:"shared_org_wide"`
		}
		resp.JSON(t, &got)
		if resp.Status != http.StatusCreated || got.MetricVersion != want || !got.Shared {
			t.Fatalf("create %d: %d %s", want, resp.Status, resp.Body)
		}
	}
	def["kind"], def["name"] = "median", metrics.LatencyMs
	p := testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/metrics", def, auth...), http.StatusBadRequest)
	if !p.HasFieldError("kind") || !p.HasFieldError("name") {
		t.Fatalf("problem %+v, want errors on kind and name", p)
	}
	testenv.ExpectProblem(t, env.Do(t, http.MethodPost, "/v1/metrics", `{"name": 3}`, auth...), http.StatusBadRequest)
	testenv.ExpectProblem(t, env.Do(t, http.MethodGet, "/v1/metrics", nil), http.StatusUnauthorized)

	resp := env.Do(t, http.MethodGet, "/v1/metrics", nil, auth...)
	var list struct {
		Builtin []struct{ Name string } `json:"builtin"`
		Shared  []struct {
			Name          string `json:"name"`
			MetricVersion int    `json:"metric_version"`
		} `json:"shared"`
	}
	resp.JSON(t, &list)
	if resp.Status != http.StatusOK || len(list.Builtin) != len(metrics.Builtins()) || len(list.Shared) != 2 || list.Shared[0].MetricVersion != 2 {
		t.Fatalf("list: %d %s", resp.Status, resp.Body)
	}
}
