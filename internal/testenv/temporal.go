package testenv

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/api"
	"github.com/expd/expd/internal/temporaltest"
	expdworker "github.com/expd/expd/worker"
)

// NewWithWorker is New wired to the in-process Temporal server (the
// package's TestMain must call temporaltest.Main), with a worker that runs
// expd's workflows on the real activities over the env's database. acts,
// when not nil, adjusts the activities (for example to let webhooks reach
// a local listener); tune adjusts the deps after the Temporal wiring.
func NewWithWorker(t testing.TB, acts func(*activities.Activities), tune ...func(*api.Deps)) (*Env, *temporaltest.Env) {
	t.Helper()
	tenv := temporaltest.Start(t)
	wire := func(d *api.Deps) { d.Temporal, d.TaskQueue = tenv.Client, tenv.TaskQueue }
	env := New(t, append([]func(*api.Deps){wire}, tune...)...)
	a := &activities.Activities{DB: env.DB, Secrets: env.Deps.Secrets}
	if acts != nil {
		acts(a)
	}
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, a) })
	return env, tenv
}
