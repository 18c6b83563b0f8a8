package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/testenv"
)

type layerBody struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Salt        string `json:"salt"`
	BucketCount int    `json:"bucket_count"`
	Experiments []struct {
		ID     string    `json:"id"`
		Name   string    `json:"name"`
		Status string    `json:"status"`
		Range  []float64 `json:"range"`
	} `json:"experiments"`
	Free      [][2]float64 `json:"free"`
	FreeShare float64      `json:"free_share"`
}

func createLayer(t *testing.T, env *testenv.Env, org testenv.Org, name string) layerBody {
	t.Helper()
	var l layerBody
	env.Do(t, "POST", "/v1/layers", map[string]any{"name": name, "salt": "layer-salt-1"}, testenv.Bearer(org.AdminToken)...).
		ExpectJSON(t, http.StatusCreated, &l)
	return l
}

// inLayer is validConfig placed in a range of a layer.
func inLayer(name, layerID string, start, end float64) map[string]any {
	cfg := validConfig(name)
	cfg["layer"] = map[string]any{"id": layerID, "range": []float64{start, end}}
	return cfg
}

// Layers: create, read, list, rename; salt and bucket_count frozen.
func TestLayersCreateReadListUpdate(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	l := createLayer(t, env, org, "chat-surface")
	if l.ID == "" || l.BucketCount != 10_000 || l.Salt != "layer-salt-1" || len(l.Experiments) != 0 || len(l.Free) != 1 || l.Free[0] != [2]float64{0, 1} || l.FreeShare != 1 {
		t.Fatalf("created layer: %+v", l)
	}
	var got layerBody
	env.Do(t, "GET", "/v1/layers/"+l.ID, nil, admin...).ExpectJSON(t, http.StatusOK, &got)
	if got.ID != l.ID || got.Name != "chat-surface" {
		t.Fatalf("read layer: %+v", got)
	}
	env.Do(t, "PUT", "/v1/layers/"+l.ID, map[string]any{"name": "chat", "description": "the chat surface"}, admin...).
		ExpectJSON(t, http.StatusOK, &got)
	if got.Name != "chat" || got.Description != "the chat surface" || got.Salt != "layer-salt-1" || got.BucketCount != 10_000 {
		t.Fatalf("updated layer: %+v", got)
	}
	var list struct{ Layers []layerBody }
	env.Do(t, "GET", "/v1/layers", nil, admin...).ExpectJSON(t, http.StatusOK, &list)
	if len(list.Layers) != 1 || list.Layers[0].Name != "chat" {
		t.Fatalf("list: %+v", list)
	}
	entries := expectActions(t, env, org, map[string]int{"layer.created": 1, "layer.updated": 1})
	for _, e := range entries {
		if e.After["id"] != l.ID || e.Action == "layer.updated" && (e.Before["name"] != "chat-surface" || e.After["name"] != "chat") {
			t.Errorf("audit entry %+v", e)
		}
	}
}

// Bad input on the layer routes: problems naming the field, nothing
// written.
func TestLayerBadInput(t *testing.T) {
	env := testenv.New(t)
	org, other := env.NewOrg(t), env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	mine := createLayer(t, env, org, "mine")
	theirs := createLayer(t, env, other, "theirs")
	post := func(body any, auth []string) testenv.Response { return env.Do(t, "POST", "/v1/layers", body, auth...) }
	put := func(body any) testenv.Response { return env.Do(t, "PUT", "/v1/layers/"+mine.ID, body, admin...) }
	for _, c := range []struct {
		name   string
		r      testenv.Response
		status int
		field  string
		code   string
	}{
		{"malformed JSON", post(`{"name": "x",`, admin), 400, "", api.CodeMalformedJSON},
		{"two objects", post(`{"name": "x"} {}`, admin), 400, "", api.CodeMalformedJSON},
		{"name a number", post(`{"name": 7, "salt": "layer-salt-1"}`, admin), 400, "name", api.CodeValidationFailed},
		{"no name", post(map[string]any{"salt": "layer-salt-1"}, admin), 400, "name", api.CodeValidationFailed},
		{"no salt", post(map[string]any{"name": "x"}, admin), 400, "salt", api.CodeValidationFailed},
		{"short salt", post(map[string]any{"name": "x", "salt": "abc"}, admin), 400, "salt", api.CodeValidationFailed},
		{"NUL in name", post(map[string]any{"name": "a\x00b", "salt": "layer-salt-1"}, admin), 400, "name", api.CodeValidationFailed},
		{"NUL in description", post(map[string]any{"name": "x", "salt": "layer-salt-1", "description": "a\x00b"}, admin), 400, "description", api.CodeValidationFailed},
		{"huge bucket_count", post(map[string]any{"name": "x", "salt": "layer-salt-1", "bucket_count": 1e12}, admin), 400, "bucket_count", api.CodeValidationFailed},
		{"bucket_count over the maximum", post(map[string]any{"name": "x", "salt": "layer-salt-1", "bucket_count": 2_000_000}, admin), 400, "bucket_count", api.CodeValidationFailed},
		{"negative bucket_count", post(map[string]any{"name": "x", "salt": "layer-salt-1", "bucket_count": -1}, admin), 400, "bucket_count", api.CodeValidationFailed},
		{"name taken", post(map[string]any{"name": "mine", "salt": "layer-salt-1"}, admin), 400, "name", api.CodeNameTaken},
		{"oversized body", post(`{"name":"`+strings.Repeat("x", 2<<20)+`"}`, admin), 413, "", api.CodeBodyTooLarge},
		{"no credentials", post(map[string]any{"name": "x", "salt": "layer-salt-1"}, nil), 401, "", api.CodeUnauthorized},
		{"API key", post(map[string]any{"name": "x", "salt": "layer-salt-1"}, testenv.APIKey(org.SecretKey)), 401, "", api.CodeUnauthorized},
		{"member", post(map[string]any{"name": "x", "salt": "layer-salt-1"}, testenv.Bearer(org.MemberToken)), 403, "", api.CodeAdminRequired},
		{"salt changed", put(map[string]any{"name": "mine", "salt": "other-salt-2"}), 400, "salt", api.CodeValidationFailed},
		{"bucket_count changed", put(map[string]any{"name": "mine", "bucket_count": 100}), 400, "bucket_count", api.CodeValidationFailed},
		{"another org's layer", env.Do(t, "GET", "/v1/layers/"+theirs.ID, nil, admin...), 404, "", api.CodeLayerNotFound},
		{"edit another org's layer", env.Do(t, "PUT", "/v1/layers/"+theirs.ID, map[string]any{"name": "x"}, admin...), 404, "", api.CodeLayerNotFound},
		{"malformed id", env.Do(t, "GET", "/v1/layers/not-an-id", nil, admin...), 404, "", api.CodeLayerNotFound},
		{"NUL in id", env.Do(t, "GET", "/v1/layers/a%00b", nil, admin...), 404, "", api.CodeLayerNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, c.r, c.status)
			if c.field != "" && !p.HasFieldError(c.field) {
				t.Errorf("want an error on %q, got %+v", c.field, p.Errors)
			}
			if c.code != "" && p.Code != c.code {
				t.Errorf("code %q, want %q", p.Code, c.code)
			}
		})
	}
	var n int64
	env.DB.Table("layers").Where("org_id = ?", org.ID).Count(&n)
	var got layerBody
	env.Do(t, "GET", "/v1/layers/"+mine.ID, nil, admin...).JSON(t, &got)
	if n != 1 || got.Name != "mine" || got.Salt != "layer-salt-1" {
		t.Fatalf("%d layers stored, %+v; want only the first, unchanged", n, got)
	}
}

// Experiments in a layer: ranges never overlap, stay inside [0, 1], name
// a layer of the org, and never change; shipping frees a range. Each
// refusal is a 400 naming the field and writes nothing.
func TestExperimentLayerRanges(t *testing.T) {
	env := testenv.New(t)
	org, other := env.NewOrg(t), env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	l := createLayer(t, env, org, "surface")
	theirs := createLayer(t, env, other, "theirs")
	a := create(t, env, org, inLayer("exp-a", l.ID, 0, 0.4))
	create(t, env, org, inLayer("exp-b", l.ID, 0.4, 0.7))
	for _, c := range []struct {
		name  string
		cfg   map[string]any
		field string
	}{
		{"overlapping", inLayer("bad", l.ID, 0.6, 0.8), "layer.range"},
		{"inside another", inLayer("bad", l.ID, 0.1, 0.2), "layer.range"},
		{"end above 1", inLayer("bad", l.ID, 0.7, 1.2), "layer.range"},
		{"negative start", inLayer("bad", l.ID, -0.1, 0.2), "layer.range"},
		{"empty", inLayer("bad", l.ID, 0.8, 0.8), "layer.range"},
		{"reversed", inLayer("bad", l.ID, 0.9, 0.8), "layer.range"},
		{"narrower than a bucket", inLayer("bad", l.ID, 0.8, 0.80001), "layer.range"},
		{"another org's layer", inLayer("bad", theirs.ID, 0.8, 0.9), "layer.id"},
		{"unknown layer", inLayer("bad", "7f3c2a10-5b1e-4d8a-9c3f-2e6b8d4a1f00", 0.8, 0.9), "layer.id"},
		{"not a uuid", inLayer("bad", "surface", 0.8, 0.9), "layer.id"},
		{"three numbers", func() map[string]any {
			c := validConfig("bad")
			c["layer"] = map[string]any{"id": l.ID, "range": []float64{0.8, 0.9, 1}}
			return c
		}(), "layer.range"},
		{"range of strings", func() map[string]any {
			c := validConfig("bad")
			c["layer"] = map[string]any{"id": l.ID, "range": []string{"0.8", "0.9"}}
			return c
		}(), "layer.range"},
		{"no range", func() map[string]any {
			c := validConfig("bad")
			c["layer"] = map[string]any{"id": l.ID}
			return c
		}(), "layer.range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", c.cfg, admin...), http.StatusBadRequest)
			if !p.HasFieldError(c.field) {
				t.Errorf("want an error on %q, got %+v", c.field, p.Errors)
			}
		})
	}
	if r := env.Do(t, "GET", "/v1/experiments/bad", nil, admin...); r.Status != http.StatusNotFound {
		t.Fatalf("a refused experiment was written: %d %s", r.Status, r.Body)
	}

	// The range is fixed: PUT and PATCH changing or removing it are 400s;
	// a PUT leaving it out keeps it.
	moved := inLayer("exp-a", l.ID, 0.7, 1)
	if p := testenv.ExpectProblem(t, env.Do(t, "PUT", "/v1/experiments/"+a.ID, moved, admin...), http.StatusBadRequest); !p.HasFieldError("layer") {
		t.Errorf("PUT moving the range: %+v", p)
	}
	for _, body := range []string{`{"layer": null}`, `{"layer": {"id": "` + l.ID + `", "range": [0, 0.3]}}`} {
		if p := testenv.ExpectProblem(t, patch(t, env, org, a.ID, body), http.StatusBadRequest); !p.HasFieldError("layer") {
			t.Errorf("PATCH %s: %+v", body, p)
		}
	}
	kept := validConfig("exp-a")
	kept["allocation"] = []map[string]any{{"variant": "control", "weight": 60}, {"variant": "concise", "weight": 40}}
	putConfig(t, env, org, a.ID, kept)
	var space layerBody
	env.Do(t, "GET", "/v1/layers/"+l.ID, nil, admin...).ExpectJSON(t, http.StatusOK, &space)
	if len(space.Experiments) != 2 || space.Experiments[0].Range[1] != 0.4 || len(space.Free) != 1 || space.Free[0] != [2]float64{0.7, 1} {
		t.Fatalf("layer after a PUT without layer: %+v", space)
	}

	// Shipping frees a range; stopping does not (a stopped experiment may
	// start again).
	env.Do(t, "POST", "/v1/experiments/"+a.ID+"/stop", nil, admin...).ExpectJSON(t, http.StatusOK, &struct{}{})
	if p := testenv.ExpectProblem(t, env.Do(t, "POST", "/v1/experiments", inLayer("exp-c", l.ID, 0, 0.4), admin...), http.StatusBadRequest); !p.HasFieldError("layer.range") {
		t.Fatalf("range of a stopped experiment taken: %+v", p)
	}
	env.Do(t, "POST", "/v1/experiments/"+a.ID+"/ship", map[string]any{"variant": "control"}, admin...).ExpectJSON(t, http.StatusOK, &struct{}{})
	env.Do(t, "GET", "/v1/layers/"+l.ID, nil, admin...).ExpectJSON(t, http.StatusOK, &space)
	if len(space.Experiments) != 1 || space.Experiments[0].Name != "exp-b" || len(space.Free) != 2 || space.Free[0] != [2]float64{0, 0.4} {
		t.Fatalf("layer after shipping exp-a: %+v", space)
	}
	create(t, env, org, inLayer("exp-c", l.ID, 0, 0.4))
}

// The config carries each experiment's range as a slot of the layer, and
// /v1/assign puts every user in at most one experiment of the layer; the
// others answer control with reason_code layer.
func TestAssignLayerExclusive(t *testing.T) {
	env := newSDKEnv(t)
	org := env.NewOrg(t)
	l := createLayer(t, env, org, "surface")
	a := create(t, env, org, inLayer("exp-a", l.ID, 0, 0.5))
	b := create(t, env, org, inLayer("exp-b", l.ID, 0.5, 1))
	var cfg struct {
		Experiments []struct {
			Name  string `json:"name"`
			Layer *struct {
				ID          string `json:"id"`
				Salt        string `json:"salt"`
				BucketCount int    `json:"bucket_count"`
				Start, End  int
			} `json:"layer"`
		} `json:"experiments"`
	}
	env.Do(t, "GET", "/v1/config", nil, testenv.APIKey(org.PublishableKey)...).ExpectJSON(t, http.StatusOK, &cfg)
	for _, e := range cfg.Experiments {
		want := map[string][2]int{"exp-a": {0, 5000}, "exp-b": {5000, 10000}}[e.Name]
		if e.Layer == nil || e.Layer.ID != l.ID || e.Layer.Salt != "layer-salt-1" || e.Layer.BucketCount != 10_000 || e.Layer.Start != want[0] || e.Layer.End != want[1] {
			t.Errorf("%s served layer %+v, want %v of %s", e.Name, e.Layer, want, l.ID)
		}
	}
	in := map[string]int{}
	for i := range 200 {
		u := fmt.Sprintf("user-%d", i)
		count := 0
		for _, id := range []string{a.ID, b.ID} {
			r := assignUser(t, env, org.PublishableKey, id, u)
			switch {
			case r.InExperiment:
				count++
				in[id]++
			case r.ReasonCode != "layer" || r.Variant != "control":
				t.Fatalf("%s in %s: %+v, want control with reason_code layer", u, id, r)
			}
		}
		if count != 1 {
			t.Fatalf("%s is in %d experiments of a layer split in two", u, count)
		}
	}
	if in[a.ID] < 70 || in[b.ID] < 70 {
		t.Errorf("split %v of 200 users", in)
	}
}
