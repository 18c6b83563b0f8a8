package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/expd/expd/activities"
	"github.com/expd/expd/audit"
	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/results"
	"github.com/expd/expd/webhooks"
	"github.com/expd/expd/workflowclient"
	"github.com/expd/expd/workflows"
)

// The hourly health schedule that a worker start registers, triggered on
// the in-process server, stops an experiment whose guardrail is breached:
// actor system from the health run's workflow, a signed guardrail.breached
// delivery, control served, and no results run published.
func TestHourlyHealthRunStopsAHarmfulTreatment(t *testing.T) {
	env, tenv := testenv.NewWithWorker(t, func(a *activities.Activities) { a.Webhooks = &webhooks.Sender{AllowPrivate: true} })
	if err := workflowclient.EnsureSchedules(t.Context(), tenv.Client, tenv.TaskQueue); err != nil {
		t.Fatal(err)
	}
	org := env.NewOrg(t)
	admin := testenv.Bearer(org.AdminToken)
	exp := harmfulExperiment(t, env, org.ID, admin)
	listener, stopListener := listenForWebhooks(t, env, org.ID)
	defer stopListener()
	time.Sleep(1100 * time.Millisecond) // the run's instant (whole seconds) falls after every event

	h := tenv.Client.ScheduleClient().GetHandle(t.Context(), workflows.GuardrailHealthScheduleID(tenv.TaskQueue))
	if err := h.Trigger(t.Context(), client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "experiment stopped by the health run", func() bool {
		var cur experimentBody
		env.Do(t, http.MethodGet, "/v1/experiments/"+exp.ID, nil, admin...).JSON(t, &cur)
		return cur.Status == "stopped"
	})
	if a := assignUser(t, env, org.PublishableKey, exp.ID, "user-1"); a.Variant != "control" || a.Status != "stopped" {
		t.Fatalf("assign after the health stop: %+v", a)
	}
	var breached *auditEntry
	for _, e := range auditOf(t, env, admin, exp.ID) {
		if e.Action == audit.GuardrailBreached {
			breached = &e
		}
	}
	if breached == nil || breached.Actor != audit.SystemActor || !strings.HasPrefix(breached.WorkflowID, workflows.GuardrailHealthWorkflowID+"-") ||
		!strings.Contains(breached.Summary, "(run health-") {
		t.Fatalf("guardrail audit entry %+v", breached)
	}
	waitUntil(t, "signed guardrail.breached and experiment.stopped deliveries", func() bool {
		return len(listener.ofType(webhooks.EventGuardrailBreached)) == 1 && len(listener.ofType(webhooks.EventExperimentStopped)) == 1
	})
	// The health run published nothing: the results people read are the
	// nightly and manual runs only.
	days, err := results.AvailableDays(t.Context(), env.DB, org.ID, exp.ID)
	if err != nil || len(days) != 0 {
		t.Fatalf("published runs after a health run: %v %v", days, err)
	}
	if listener.rejected != 0 {
		t.Fatalf("%d deliveries failed verification", listener.rejected)
	}
}
