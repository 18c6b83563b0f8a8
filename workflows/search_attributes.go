package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// Custom search attributes expd sets on its workflows so operators can find
// an org's or an experiment's runs in the Temporal UI. A namespace without
// them refuses the starts that set them, so every worker start registers
// them (workflowclient.EnsureSearchAttributes), as do the dev server and
// the test server.
const (
	SearchAttributeOrgID        = "ExpdOrgID"
	SearchAttributeExperimentID = "ExpdExperimentID"
)

var (
	orgIDKey        = temporal.NewSearchAttributeKeyKeyword(SearchAttributeOrgID)
	experimentIDKey = temporal.NewSearchAttributeKeyKeyword(SearchAttributeExperimentID)
	// customKeys are the attributes a namespace must register.
	customKeys = []temporal.SearchAttributeKey{orgIDKey, experimentIDKey}
	// scheduledStartKey is set by Temporal on workflows a schedule starts.
	scheduledStartKey = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")
)

// ExperimentSearchAttributes tag a workflow with its org and experiment.
func ExperimentSearchAttributes(orgID, experimentID string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(orgIDKey.ValueSet(orgID), experimentIDKey.ValueSet(experimentID))
}

// SearchAttributes are expd's custom search attributes and their types.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	attrs := make(map[string]enumspb.IndexedValueType, len(customKeys))
	for _, k := range customKeys {
		attrs[k.GetName()] = k.GetValueType()
	}
	return attrs
}
