package usecases_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/sdkcache"
	"github.com/expd/expd/usecases"
	expdworker "github.com/expd/expd/worker"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

var ctx = context.Background()

const actor = "user_1"

// newService is the use cases over a fresh database and one org. With
// tenv they reach its Temporal server; without, Temporal is unreachable.
// The SDK cache never revalidates on its own within a test, so only the
// use cases' expiry makes it see a change.
func newService(t *testing.T, tenv *temporaltest.Env) (usecases.Service, string) {
	t.Helper()
	db := testenv.DB(t)
	svc := usecases.Service{DB: db, SDK: sdkcache.New(db, sdkcache.Options{MaxAge: time.Hour}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tenv != nil {
		svc.Workflows = workflowclient.Starter{Client: tenv.Client, TaskQueue: tenv.TaskQueue}
	}
	return svc, testenv.NewOrg(t, db, testenv.Signer(t)).ID
}

// servedVersion is the config version the instance's SDK cache serves.
func servedVersion(t *testing.T, svc usecases.Service, org string) int64 {
	t.Helper()
	snap, err := svc.SDK.Configs.Get(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	return snap.ConfigVersion
}

func TestSavesAndTransitionsExpireTheServedConfig(t *testing.T) {
	svc, org := newService(t, nil)
	before := servedVersion(t, svc, org)

	exp, err := svc.CreateExperiment(ctx, org, actor, testenv.ExperimentConfig("expiry"))
	if err != nil {
		t.Fatal(err)
	}
	if got := servedVersion(t, svc, org); got == before || got != exp.ConfigVersion {
		t.Fatalf("after create the cache serves config version %d, want %d", got, exp.ConfigVersion)
	}

	cfg := exp.Config
	cfg.Allocation[0].Weight, cfg.Allocation[1].Weight = 90, 10
	updated, err := svc.UpdateExperiment(ctx, org, exp.Name, actor, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := servedVersion(t, svc, org); got != updated.ConfigVersion {
		t.Fatalf("after update the cache serves config version %d, want %d", got, updated.ConfigVersion)
	}

	stopped, err := svc.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionStop, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != experiments.StatusStopped || stopped.Version != 3 {
		t.Fatalf("stop gave %s v%d", stopped.Status, stopped.Version)
	}
	if got := servedVersion(t, svc, org); got != stopped.ConfigVersion {
		t.Fatalf("after stop the cache serves config version %d, want %d", got, stopped.ConfigVersion)
	}
	// A change to where the experiment already is writes nothing.
	again, err := svc.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionStop, Actor: actor})
	if err != nil || again.Version != stopped.Version {
		t.Fatalf("second stop: v%d, %v", again.Version, err)
	}
}

func TestRefusedSaveAndTransitionReturnTheStoreError(t *testing.T) {
	svc, org := newService(t, nil)
	exp, err := svc.CreateExperiment(ctx, org, actor, testenv.ExperimentConfig("taken"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateExperiment(ctx, org, actor, testenv.ExperimentConfig("taken")); !errors.Is(err, experiments.ErrNameTaken) {
		t.Fatalf("second create of the name: %v", err)
	}
	if _, err := svc.UpdateExperiment(ctx, org, "no-such", actor, exp.Config); !errors.Is(err, experiments.ErrNotFound) {
		t.Fatalf("update of an unknown experiment: %v", err)
	}
	if _, err := svc.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionShip, Variant: "treatment", Actor: actor}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionStart, Actor: actor}); !experiments.IsTransitionError(err) {
		t.Fatalf("start after ship: %v", err)
	}
}

// What a change owes Temporal (the lifecycle signal, the announcement)
// is delivered and cleared when Temporal is reachable, and left to the
// reconcile when it is not.
func TestChangesDeliverWhatTheyOweTemporal(t *testing.T) {
	for _, reachable := range []bool{false, true} {
		t.Run(map[bool]string{false: "unreachable", true: "reachable"}[reachable], func(t *testing.T) {
			var tenv *temporaltest.Env
			if reachable {
				tenv = temporaltest.Start(t)
			}
			svc, org := newService(t, tenv)
			cfg := testenv.ExperimentConfig("owed")
			startAt := time.Now().Add(time.Hour).UTC()
			cfg.StartAt = &startAt
			exp, err := svc.CreateExperiment(ctx, org, actor, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if exp.Status != experiments.StatusScheduled {
				t.Fatalf("status %s, want scheduled", exp.Status)
			}
			if owed := signalOwed(t, svc.DB, exp.ID); owed == reachable {
				t.Fatalf("signal still owed: %v, Temporal reachable: %v", owed, reachable)
			}
			if reachable {
				if _, err := tenv.Client.DescribeWorkflowExecution(ctx, workflows.ExperimentWorkflowID(exp.ID), ""); err != nil {
					t.Fatalf("the lifecycle workflow was not signalled: %v", err)
				}
			}

			if _, err := svc.Transition(ctx, org, exp.ID, experiments.Change{Action: experiments.ActionStop, Actor: actor}); err != nil {
				t.Fatal(err)
			}
			queued, pending := outbox(t, svc.DB, org)
			if queued != 1 || (pending == 0) == !reachable {
				t.Fatalf("outbox: %d queued, %d pending; Temporal reachable: %v", queued, pending, reachable)
			}
			if signalOwed(t, svc.DB, exp.ID) {
				t.Fatal("a stopped experiment still owes a signal")
			}
		})
	}
}

func signalOwed(t *testing.T, db *gorm.DB, experimentID string) bool {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COUNT(*) FROM experiments WHERE id = ? AND signal_pending_since IS NOT NULL", experimentID).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func outbox(t *testing.T, db *gorm.DB, org string) (queued, pending int64) {
	t.Helper()
	err := db.Raw("SELECT COUNT(*), COUNT(*) - COUNT(sent_at) FROM outbound_events WHERE org_id = ?", org).Row().Scan(&queued, &pending)
	if err != nil {
		t.Fatal(err)
	}
	return queued, pending
}

// newWorkerService is newService with a worker running expd's workflows
// on the real activities over the service's database.
func newWorkerService(t *testing.T) (usecases.Service, string, *temporaltest.Env) {
	t.Helper()
	tenv := temporaltest.Start(t)
	svc, org := newService(t, tenv)
	tenv.NewWorker(func(r worker.Registry) { expdworker.Register(r, &activities.Activities{DB: svc.DB}) })
	return svc, org, tenv
}
