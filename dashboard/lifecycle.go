package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/experiments"
	"github.com/expd/expd/validate"
)

// lifecycleData is the confirmation of a lifecycle action: what users will
// get once it is done, and the form that does it.
type lifecycleData struct {
	Exp         experiments.Experiment
	Action      string
	Variant     string
	Heading     string
	Consequence string
	Button      string
}

// lifecycleButtons are the actions the results page offers an admin for
// an experiment in its status: start (not running), stop (running or
// waiting to run), ship (any variant, until shipped: shipping is final).
type lifecycleButtons struct {
	Start, Stop, Ship bool
	Variants          []string
	Suggested         string // the variant the verdict says to ship, preselected
}

func buttonsFor(exp experiments.Experiment, suggested string) lifecycleButtons {
	if exp.Status == experiments.StatusShipped {
		return lifecycleButtons{}
	}
	return lifecycleButtons{
		Start:     exp.Status != experiments.StatusRunning,
		Stop:      exp.Status == experiments.StatusRunning || exp.Status == experiments.StatusScheduled,
		Ship:      true,
		Variants:  variantsOf(exp),
		Suggested: suggested,
	}
}

// POST /experiments/:id/lifecycle action=start|stop|ship [variant=]
// [confirm=yes] (admins): without confirm it shows what users will get and
// asks; with it, the change goes through the use case the API's
// lifecycle routes call (usecases.Service.Transition) and the results page
// shows the new status.
func (d *Dashboard) lifecycle(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	ch := experiments.Change{Action: c.PostForm("action"), Variant: strings.TrimSpace(c.PostForm("variant")), Actor: session(c).UserID}
	data, problem := confirmation(exp, ch)
	if problem != "" {
		d.message(c, http.StatusBadRequest, "Not a lifecycle change", problem)
		return
	}
	if c.PostForm("confirm") != "yes" {
		d.render(c, http.StatusOK, "confirm", data.Heading, "experiments", data)
		return
	}
	if _, err := d.deps.UseCases.Transition(c.Request.Context(), orgID(c), exp.ID, ch); err != nil {
		d.transitionError(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/experiments/"+exp.ID)
}

// confirmation words what ch does to exp's users; problem says why ch is
// not a change the page offers.
func confirmation(exp experiments.Experiment, ch experiments.Change) (data lifecycleData, problem string) {
	data = lifecycleData{Exp: exp, Action: ch.Action, Variant: ch.Variant}
	control := exp.ControlVariant()
	switch ch.Action {
	case experiments.ActionStart:
		var split []string
		for _, s := range shares(exp.Allocation) {
			split = append(split, s.Variant+" "+s.Share)
		}
		data.Heading, data.Button = "Start "+exp.Name+"?", "Yes, start "+exp.Name
		data.Consequence = fmt.Sprintf("Start %s: every user gets a variant by the weights from now on (%s), and the experiment collects results.",
			exp.Name, strings.Join(split, ", "))
	case experiments.ActionStop:
		data.Heading, data.Button = "Stop "+exp.Name+"?", "Yes, stop "+exp.Name
		data.Consequence = fmt.Sprintf("Stop %s: every user gets %s (the control) from now on; the experiment stops collecting. You can start it again later.",
			exp.Name, control)
	case experiments.ActionShip:
		if !contains(variantsOf(exp), ch.Variant) {
			return data, fmt.Sprintf("%q is not a variant of %s: choose one of %s.", ch.Variant, exp.Name, strings.Join(variantsOf(exp), ", "))
		}
		data.Heading, data.Button = "Ship variant "+ch.Variant+"?", "Yes, ship "+ch.Variant
		data.Consequence = fmt.Sprintf("Ship variant %s: every user gets %s's config from now on; the experiment stops collecting. Shipping is final: the experiment cannot be started, stopped or shipped with another variant afterwards.",
			ch.Variant, ch.Variant)
	default:
		return data, fmt.Sprintf("%q is not a lifecycle action: start, stop or ship.", ch.Action)
	}
	return data, ""
}

// transitionError shows why a lifecycle change was refused, in the
// domain's words (the API answers the same cases with 409 and 400).
func (d *Dashboard) transitionError(c *gin.Context, err error) {
	var reasons []string
	for _, fe := range validate.Fields(err) {
		reasons = append(reasons, fe.Field+": "+fe.Reason)
	}
	text := strings.Join(reasons, "; ") + ". Nothing was changed."
	switch {
	case experiments.IsTransitionError(err):
		d.message(c, http.StatusConflict, "Not possible in this state", text)
	case errors.Is(err, experiments.ErrNotFound):
		d.message(c, http.StatusNotFound, "No such experiment", "Your organization has no experiment with this id or name.")
	case len(reasons) > 0:
		d.message(c, http.StatusBadRequest, "Not a valid change", text)
	default:
		d.fail(c, err)
	}
}
