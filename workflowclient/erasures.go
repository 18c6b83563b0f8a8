package workflowclient

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/expd/expd/workflows"
)

// StartErasure starts the erasure erasureID of the org's user named by
// userHash (ErasureWorkflowID). While one runs for the user, the start
// joins it (erasure.Create answered with that run's row); a completed one
// leaves the id free for a new request.
func (s Starter) StartErasure(ctx context.Context, orgID, userHash, erasureID string) error {
	if s.Client == nil {
		return ErrNotConnected
	}
	id := workflows.ErasureWorkflowID(orgID, userHash)
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: s.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.Erasure, workflows.ErasureInput{ErasureID: erasureID})
	if err != nil {
		return fmt.Errorf("start erasure %s: %w", id, err)
	}
	return nil
}
