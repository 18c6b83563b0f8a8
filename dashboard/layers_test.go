package dashboard_test

import (
	"net/http"
	"testing"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/testenv"
)

// The layers page shows each layer's free space and the ranges its
// experiments hold; another org sees none of it.
func TestLayersPageShowsFreeSpace(t *testing.T) {
	env := testenv.New(t)
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	var l struct{ ID string }
	env.Do(t, http.MethodPost, "/v1/layers", map[string]any{"name": "chat-surface", "salt": "layer-salt-1", "description": "<b>chat</b>"}, admin...).
		ExpectJSON(t, http.StatusCreated, &l)
	body := testenv.ExperimentConfig("in-layer")
	body.Layer = &experiments.LayerPlacement{ID: l.ID, Range: []float64{0.25, 0.5}}
	var exp struct{ ID string }
	env.Do(t, http.MethodPost, "/v1/experiments", body, admin...).ExpectJSON(t, http.StatusCreated, &exp)
	v := newVisitor(t, env, org.MemberToken)
	p := v.get("/layers")
	expect(t, p, http.StatusOK, "chat-surface", "&lt;b&gt;chat&lt;/b&gt;", "<strong>75%</strong> free: [0, 0.25), [0.5, 1)",
		`href="/experiments/`+exp.ID+`"`, "[0.25, 0.5)", "25%", `aria-current="page">Layers`)
	expectNot(t, p, "<b>chat")
	expect(t, newVisitor(t, env, env.NewOrg(t).AdminToken).get("/layers"), http.StatusOK, "No layers yet")
}
