package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/calls"
	"github.com/expd/expd/experiments"
	"github.com/expd/expd/privacy"
	"github.com/expd/expd/usecases"
	"github.com/expd/expd/validate"
)

// perColumn is how many calls each variant's column shows when the page
// is not filtered to one variant.
const perColumn = 20

// callsColumn is one variant's calls, side by side with the others.
type callsColumn struct {
	Variant string
	Calls   []calls.Call
	More    string // the next page of this variant alone; "" on the last
}

type callsView struct {
	Exp      experiments.Experiment
	Form     url.Values // the filters as given, to fill the form again
	Back     string     // the page's own query, for the review forms
	Variants []string
	Columns  []callsColumn
	Errors   []validate.FieldError
	Privacy  privacy.InForce // what the texts are stored under
	Since    time.Time       // Privacy's since; zero: never changed
}

// GET /experiments/:id/calls: the call explorer. The same filters as GET
// /v1/experiments/:id/calls (package calls); unfiltered by variant, one
// column per variant of the allocation, side by side.
func (d *Dashboard) callsPage(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	form := c.Request.URL.Query()
	inForce, err := privacy.Store{DB: d.deps.DB}.InForce(c.Request.Context(), orgID(c), exp.PayloadPolicy)
	if err != nil {
		d.fail(c, err)
		return
	}
	view := callsView{Exp: exp, Form: form, Back: form.Encode(), Privacy: inForce}
	if inForce.PayloadPolicySince != nil {
		view.Since = *inForce.PayloadPolicySince
	}
	for _, s := range exp.Allocation {
		view.Variants = append(view.Variants, s.Variant)
	}
	q, err := calls.Parse(form)
	if err != nil {
		view.Errors = validate.Fields(err)
		d.render(c, http.StatusBadRequest, "calls", "Calls of "+exp.Name, "experiments", view)
		return
	}
	columns := view.Variants
	if q.Variant != "" {
		columns = []string{q.Variant}
	} else if form.Get("limit") == "" {
		q.Limit = perColumn
	}
	for _, v := range columns {
		cq := q
		cq.Variant = v
		page, err := calls.Read(c.Request.Context(), d.deps.Events, orgID(c), exp.ID, cq)
		if err != nil {
			d.fail(c, err)
			return
		}
		col := callsColumn{Variant: v, Calls: page.Calls}
		if page.NextCursor != "" {
			next := url.Values{}
			for k, vs := range form {
				next[k] = vs
			}
			next.Set("variant", v)
			next.Set("cursor", page.NextCursor)
			col.More = "/experiments/" + exp.ID + "/calls?" + next.Encode()
		}
		view.Columns = append(view.Columns, col)
	}
	d.render(c, http.StatusOK, "calls", "Calls of "+exp.Name, "experiments", view)
}

// POST /experiments/:id/calls/review: a reviewer's human score of one
// call (usecases.ReviewCall), then back to the page it was given on.
func (d *Dashboard) reviewCall(c *gin.Context) {
	exp, ok := d.experimentParam(c)
	if !ok {
		return
	}
	r := usecases.Review{CallID: c.PostForm("call_id"), Name: c.PostForm("name"), Comment: c.PostForm("comment")}
	value, err := strconv.ParseFloat(c.PostForm("value"), 64)
	if err != nil {
		d.message(c, http.StatusBadRequest, "Score not saved", "The value must be a number.")
		return
	}
	r.Value = value
	err = d.deps.UseCases.ReviewCall(c.Request.Context(), orgID(c), reviewerID(c), r)
	var fields *validate.Error
	switch {
	case errors.As(err, &fields):
		text := "The score was refused:"
		for _, f := range validate.Fields(err) {
			text += " " + f.Field + " " + f.Reason + "."
		}
		d.message(c, http.StatusBadRequest, "Score not saved", text)
		return
	case err != nil:
		d.fail(c, err)
		return
	}
	back, _ := url.ParseQuery(c.PostForm("back"))
	c.Redirect(http.StatusSeeOther, "/experiments/"+exp.ID+"/calls?"+back.Encode()+"#call-"+url.PathEscape(r.CallID))
}

// reviewerID is the signed-in user's id, recorded as a review's evaluator.
func reviewerID(c *gin.Context) string {
	if v, ok := c.Get(ctxViewer); ok {
		return v.(*viewer).UserID
	}
	return ""
}
