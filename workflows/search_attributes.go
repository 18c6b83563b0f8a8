package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Custom search attributes expd sets on its workflows so operators can find
// an org's or an experiment's runs in the Temporal UI. A namespace without
// them refuses the starts that set them, so EnsureSearchAttributes runs at
// every worker start (worker.Run), in the dev server and in the test server.
const (
	SearchAttributeOrgID        = "ExpdOrgID"
	SearchAttributeExperimentID = "ExpdExperimentID"
)

var (
	orgIDKey        = temporal.NewSearchAttributeKeyKeyword(SearchAttributeOrgID)
	experimentIDKey = temporal.NewSearchAttributeKeyKeyword(SearchAttributeExperimentID)
	// scheduledStartKey is set by Temporal on workflows a schedule starts.
	scheduledStartKey = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")
)

// ExperimentSearchAttributes tag a workflow with its org and experiment.
func ExperimentSearchAttributes(orgID, experimentID string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(orgIDKey.ValueSet(orgID), experimentIDKey.ValueSet(experimentID))
}

// searchAttributeProbeInterval paces the wait for newly added attributes to
// reach the frontend's namespace cache (refreshed every 2 s by default).
const searchAttributeProbeInterval = 100 * time.Millisecond

// SearchAttributes are expd's custom search attributes and their types.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		SearchAttributeOrgID:        enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		SearchAttributeExperimentID: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
}

// EnsureSearchAttributes registers expd's custom search attributes in the
// namespace when missing, and returns once queries on them are accepted.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	listed, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, kind := range SearchAttributes() {
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
	query := fmt.Sprintf("%s = '' AND %s = ''", SearchAttributeOrgID, SearchAttributeExperimentID)
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
