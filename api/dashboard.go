package api

import (
	"context"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/dashboard"
	"github.com/expd/expd/results"
)

// dashboardDeps hands the dashboard the API's own functions for runs and
// key rotation, so a page and a route do each thing one way.
func (h *handlers) dashboardDeps() dashboard.Deps {
	return dashboard.Deps{
		DB: h.deps.DB, Verifier: h.deps.Verifier, Billing: h.deps.Billing, SDK: h.deps.SDK, Logger: h.deps.Logger,
		DevToken: h.deps.DevToken, TemporalUI: h.deps.TemporalUI, Namespace: h.deps.Namespace,
		StartRun: func(ctx context.Context, org, experimentID string) (dashboard.Run, error) {
			v, err := h.startManualRun(ctx, org, experimentID)
			return dashboardRun(v), err
		},
		RunState: func(ctx context.Context, org, experimentID, runID string) (dashboard.Run, error) {
			key, err := results.ParseKey(runID)
			if err != nil {
				return dashboard.Run{}, results.ErrRunNotFound
			}
			v, err := h.runState(ctx, org, experimentID, key)
			return dashboardRun(v), err
		},
		Saved: h.experimentSaved,
		RotateKey: func(ctx context.Context, org, actor string, scope auth.Scope) (string, error) {
			k, err := h.rotateKeyOf(ctx, org, actor, scope)
			return k.Key, err
		},
	}
}

func dashboardRun(v runView) dashboard.Run {
	return dashboard.Run{ID: v.RunID, WorkflowID: v.WorkflowID, Status: v.Status, Error: v.Error}
}
