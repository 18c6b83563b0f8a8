package privacy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/expd/expd/redaction"
	"github.com/expd/expd/validate"
)

// Settings is GET and PUT /v1/privacy. RetentionDays nil: the plan's.
type Settings struct {
	PayloadPolicy  Policy              `json:"payload_policy"`
	CustomPatterns []redaction.Pattern `json:"custom_patterns"`
	RetentionDays  *int                `json:"retention_days"`
	UpdatedAt      *time.Time          `json:"updated_at,omitempty"`
	UpdatedBy      string              `json:"updated_by,omitempty"`
}

// Defaults: an org that never set its privacy stores texts (the v1
// contract), has no custom pattern and keeps events as long as its plan.
func Defaults() Settings {
	return Settings{PayloadPolicy: PolicyStore, CustomPatterns: []redaction.Pattern{}}
}

// ErrTextNotKept: a reader of texts (an LLM judge) was asked for where
// the payload policy keeps none.
var ErrTextNotKept = errors.New("the payload policy keeps no text to read")

// ErrHashUnavailable: the hash policy needs the server's EXPD_SECRETS_KEY.
var ErrHashUnavailable = errors.New("the hash payload policy needs EXPD_SECRETS_KEY on the server")

// Check validates s for an org whose plan keeps events planRetentionDays
// days: a known policy, custom patterns that compile (RE2; the error
// names custom_patterns[i].field), retention_days from 1 to the plan's.
// It normalises a nil pattern list to an empty one.
func (s *Settings) Check(planRetentionDays int) error {
	var errs validate.Errors
	switch {
	case s.PayloadPolicy == "":
		errs.Add("payload_policy", "is required: one of %s", policyNames())
	case !s.PayloadPolicy.Valid():
		errs.Add("payload_policy", "must be one of %s", policyNames())
	}
	if s.CustomPatterns == nil {
		s.CustomPatterns = []redaction.Pattern{}
	}
	if _, err := redaction.Compile(s.CustomPatterns); err != nil {
		var pe *redaction.PatternError
		if !errors.As(err, &pe) {
			return err
		}
		errs.Add(pe.Path(), "%s", pe.Msg)
	}
	if d := s.RetentionDays; d != nil && (*d < 1 || *d > planRetentionDays) {
		errs.Add("retention_days", "must be from 1 to %d (the plan's retention), or null for the plan's", planRetentionDays)
	}
	return errs.Err()
}

func policyNames() string {
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// CheckExperiment validates an experiment's payload_policy against its
// org's: empty (none) or a policy at least as strict as org's.
func CheckExperiment(experiment, org Policy) error {
	switch {
	case experiment == "":
		return nil
	case !experiment.Valid():
		return validate.New("payload_policy", "must be one of %s", policyNames())
	case experiment.rank() < org.rank():
		return validate.New("payload_policy", "%q is looser than the org's payload policy %q: an experiment may only make it stricter (%s, strictest last)", experiment, org, policyNames())
	}
	return nil
}

// Retention is the retention in force for an org whose plan keeps events
// planDays days: the shorter of the plan's and the org's retention_days.
func (s Settings) Retention(planDays int) time.Duration {
	d := planDays
	if s.RetentionDays != nil && *s.RetentionDays < d {
		d = *s.RetentionDays
	}
	return time.Duration(d) * 24 * time.Hour
}

// summary is the audit log's view of settings (patterns by name and
// regex: they are configuration, not personal data).
func (s Settings) summary() string {
	ret := "the plan's"
	if s.RetentionDays != nil {
		ret = fmt.Sprintf("%d days", *s.RetentionDays)
	}
	return fmt.Sprintf("payload policy %s, %d custom pattern(s), retention %s", s.PayloadPolicy, len(s.CustomPatterns), ret)
}
