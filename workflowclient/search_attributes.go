package workflowclient

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/expd/expd/workflows"
)

// searchAttributeProbeInterval paces the wait for newly added attributes to
// reach the frontend's namespace cache (refreshed every 2 s by default).
const searchAttributeProbeInterval = 100 * time.Millisecond

// EnsureSearchAttributes registers expd's custom search attributes
// (workflows.SearchAttributes) in the namespace when missing, and returns
// once queries on them are accepted. Every worker start calls it, as do
// the dev server and the test server.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	listed, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, kind := range workflows.SearchAttributes() {
		if _, ok := listed.GetCustomAttributes()[name]; !ok {
			missing[name] = kind
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("add search attributes to namespace %q: %w", namespace, err)
	}
	return waitForSearchAttributes(ctx, c, namespace)
}

// waitForSearchAttributes polls a visibility query naming every attribute
// until the frontend stops rejecting it as unknown.
func waitForSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	query := fmt.Sprintf("%s = '' AND %s = ''", workflows.SearchAttributeOrgID, workflows.SearchAttributeExperimentID)
	for {
		_, err := c.WorkflowService().CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			Namespace: namespace,
			Query:     query,
		})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for search attributes in namespace %q: %w (last error: %v)", namespace, ctx.Err(), err)
		case <-time.After(searchAttributeProbeInterval):
		}
	}
}
