package workflows_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/internal/temporaltest"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
	"github.com/expd/expd/workflows"
)

func runIdentitySync(t *testing.T, env *temporaltest.Env, svixID string, ch orgs.IdentityChange) workflows.IdentitySyncResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res workflows.IdentitySyncResult
	env.Execute(ctx, t, client.StartWorkflowOptions{ID: workflows.IdentitySyncID(svixID)},
		workflows.IdentitySync, workflows.IdentitySyncInput{SvixID: svixID, Change: ch}, &res)
	return res
}

func TestIdentitySyncAppliesNewestChanges(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	env := startWorker(t, &activities.Activities{DB: db})
	prefix := "msg_" + env.TaskQueue + "_"
	member := &orgs.MembershipData{ClerkMembershipID: "orgmem_w", ClerkOrgID: "org_w", ClerkUserID: "user_w", Role: "org:admin"}

	steps := []struct {
		change orgs.IdentityChange
		want   bool
	}{
		{orgs.IdentityChange{At: 2000, Membership: member}, true}, // before its org and user
		{orgs.IdentityChange{At: 1000, Org: &orgs.OrgData{ClerkOrgID: "org_w", Name: "Workflow Org", Slug: "wf"}}, true},
		{orgs.IdentityChange{At: 900, Org: &orgs.OrgData{ClerkOrgID: "org_w", Name: "Older Name", Slug: "wf"}}, false},
		{orgs.IdentityChange{At: 3000, Deleted: true, Membership: member}, true},
	}
	for i, s := range steps {
		if got := runIdentitySync(t, env, prefix+string(rune('a'+i)), s.change); got.Applied != s.want {
			t.Fatalf("step %d: applied %v, want %v", i, got.Applied, s.want)
		}
	}
	o, err := orgs.Ensure(context.Background(), db, "org_w", "ignored")
	if err != nil || o.Name != "Workflow Org" {
		t.Fatalf("org %+v, %v", o, err)
	}
	var live int64
	db.Table("memberships").Where("org_id = ? AND deleted_at IS NULL", o.ID).Count(&live)
	if live != 0 {
		t.Fatalf("%d live memberships after the delete", live)
	}
}
