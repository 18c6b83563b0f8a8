package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/auth"
	"github.com/expd/expd/workflows"
)

func TestKeyRotationStoresTheHashAndReportsTheSwap(t *testing.T) {
	env, a := newSuiteEnv()
	created := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	in := workflows.KeyRotationInput{OrgID: "org-1", Scope: auth.Secret, Hash: "hash-1", Prefix: "sk_abcdefg", Actor: "user_1"}
	env.OnActivity(a.StoreKey, mock.Anything, activities.StoreKeyInput{OrgID: "org-1", Scope: auth.Secret, Hash: "hash-1", Prefix: "sk_abcdefg", Actor: "user_1"}).
		Return(activities.StoreKeyResult{KeyID: "key-2", CreatedAt: created, RevokedIDs: []string{"key-1"}}, nil).Once()

	env.ExecuteWorkflow(workflows.KeyRotation, in)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var res workflows.KeyRotationResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.KeyID != "key-2" || !res.CreatedAt.Equal(created) || len(res.RevokedIDs) != 1 || res.RevokedIDs[0] != "key-1" {
		t.Fatalf("result %+v", res)
	}
	env.AssertExpectations(t)
}

func TestKeyRotationRetriesTransientStoreFailures(t *testing.T) {
	env, a := newSuiteEnv()
	env.SetTestTimeout(time.Minute)
	calls := 0
	env.OnActivity(a.StoreKey, mock.Anything, mock.Anything).Return(func(_ context.Context, _ activities.StoreKeyInput) (activities.StoreKeyResult, error) {
		calls++
		if calls < 3 {
			return activities.StoreKeyResult{}, errors.New("database unavailable")
		}
		return activities.StoreKeyResult{KeyID: "key-2"}, nil
	})
	env.ExecuteWorkflow(workflows.KeyRotation, workflows.KeyRotationInput{OrgID: "org-1", Scope: auth.Publishable, Hash: "h"})
	var res workflows.KeyRotationResult
	if err := env.GetWorkflowResult(&res); err != nil || res.KeyID != "key-2" || calls != 3 {
		t.Fatalf("after transient failures: result %+v, error %v, %d calls; want key-2 after 3 calls", res, err, calls)
	}
}

func TestKeyRotationID(t *testing.T) {
	if got := workflows.KeyRotationID("org-1", string(auth.Secret)); got != "keys/org-1/secret" {
		t.Fatalf("KeyRotationID = %q", got)
	}
}
