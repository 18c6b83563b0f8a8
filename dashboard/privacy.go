package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/expd/expd/privacy"
	"github.com/expd/expd/redaction"
	"github.com/expd/expd/validate"
)

// blankPatternRows are the empty rows the form offers for new patterns.
const blankPatternRows = 3

type privacyData struct {
	Settings          privacy.Settings
	Retention         string // the form's retention_days ("": the plan's)
	Patterns          []redaction.Pattern
	PlanRetentionDays int
	Policies          []privacy.Policy
	Detectors         []string
	Errors            []validate.FieldError
	Saved             bool
}

// GET /privacy (admins): the org's payload policy, custom patterns and
// retention, as GET /v1/privacy shows them, in a form.
func (d *Dashboard) privacyPage(c *gin.Context) {
	set, planDays, err := d.deps.UseCases.Privacy(c.Request.Context(), orgID(c))
	if err != nil {
		d.fail(c, err)
		return
	}
	d.renderPrivacy(c, http.StatusOK, privacyForm(set, planDays))
}

// POST /privacy (admins): saves the form through the same use case as PUT
// /v1/privacy; refused fields are listed and the form keeps what was sent.
func (d *Dashboard) privacyPost(c *gin.Context) {
	in := privacy.Settings{PayloadPolicy: privacy.Policy(c.PostForm("payload_policy")), CustomPatterns: []redaction.Pattern{}}
	names, regexes, holders := c.PostFormArray("pattern_name"), c.PostFormArray("pattern_regex"), c.PostFormArray("pattern_placeholder")
	for i := range names {
		p := redaction.Pattern{Name: strings.TrimSpace(names[i]), Regex: at(regexes, i), Placeholder: at(holders, i)}
		if p.Name != "" || p.Regex != "" || p.Placeholder != "" {
			in.CustomPatterns = append(in.CustomPatterns, p)
		}
	}
	var errs validate.Errors
	if raw := strings.TrimSpace(c.PostForm("retention_days")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			errs.Add("retention_days", "must be a whole number of days, or empty for the plan's")
		}
		in.RetentionDays = &n
	}
	err := errs.Err()
	out, planDays := in, 0
	if err == nil {
		out, planDays, err = d.deps.UseCases.SetPrivacy(c.Request.Context(), orgID(c), session(c).UserID, in)
	}
	var bad []validate.FieldError
	switch {
	case validate.Fields(err) != nil:
		bad = validate.Fields(err)
	case errors.Is(err, privacy.ErrHashUnavailable):
		bad = []validate.FieldError{{Field: "payload_policy", Reason: err.Error()}}
	case err != nil:
		d.fail(c, err)
		return
	}
	if bad != nil {
		_, planDays, perr := d.deps.UseCases.Privacy(c.Request.Context(), orgID(c))
		if perr != nil {
			d.fail(c, perr)
			return
		}
		data := privacyForm(in, planDays)
		data.Retention, data.Errors = c.PostForm("retention_days"), bad
		d.renderPrivacy(c, http.StatusBadRequest, data)
		return
	}
	data := privacyForm(out, planDays)
	data.Saved = true
	d.renderPrivacy(c, http.StatusOK, data)
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}

func privacyForm(set privacy.Settings, planDays int) privacyData {
	data := privacyData{Settings: set, PlanRetentionDays: planDays, Policies: privacy.Policies, Detectors: redaction.Builtins()}
	if set.RetentionDays != nil {
		data.Retention = strconv.Itoa(*set.RetentionDays)
	}
	data.Patterns = append(append(data.Patterns, set.CustomPatterns...), make([]redaction.Pattern, blankPatternRows)...)
	return data
}

func (d *Dashboard) renderPrivacy(c *gin.Context, status int, data privacyData) {
	d.render(c, status, "privacy", "Privacy", "privacy", data)
}
