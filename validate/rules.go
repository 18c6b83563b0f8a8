package validate

import (
	"regexp"
	"time"
)

// Rules shared by the write paths (events and scores, docs/ingest.md):
// one rule and its bound, written once.
const (
	// MaxIDLen bounds an id a client mints (event_id, a score's call_id).
	MaxIDLen = 128
	// MaxNameLen bounds a metric-style name (business_metric, a score's name).
	MaxNameLen = 128
	// A salt (an experiment's, a layer's, a holdout's): a frozen bucketing
	// input, MinSaltLen to MaxSaltLen letters, digits, '_' and '-'.
	MinSaltLen = 8
	MaxSaltLen = 64
)

var (
	// Printable ASCII without spaces: UUIDs, webhook message ids.
	idPattern = regexp.MustCompile(`^[\x21-\x7e]+$`)
	// Letters, digits, '.', '_', ':' and '-', starting with a letter or digit.
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	saltPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// Salt checks a required salt.
func (e *Errors) Salt(field, v string) {
	switch {
	case v == "":
		e.Add(field, "is required")
	case len(v) < MinSaltLen || len(v) > MaxSaltLen:
		e.Add(field, "must be %d to %d characters", MinSaltLen, MaxSaltLen)
	case !saltPattern.MatchString(v):
		e.Add(field, "must use only letters, digits, '_' and '-'")
	}
}

// ID checks a required id: 1 to MaxIDLen printable ASCII characters
// without spaces.
func (e *Errors) ID(field, v string) {
	switch {
	case v == "":
		e.Add(field, "is required")
	case !ValidID(v):
		e.Add(field, "must be 1 to %d printable ASCII characters without spaces", MaxIDLen)
	}
}

// ValidID says whether v is an id a client may mint: 1 to MaxIDLen
// printable ASCII characters without spaces.
func ValidID(v string) bool {
	return v != "" && len(v) <= MaxIDLen && idPattern.MatchString(v)
}

// Name checks a non-empty metric-style name (the caller says how a
// missing one is wrong).
func (e *Errors) Name(field, v string) {
	if v != "" && (len(v) > MaxNameLen || !namePattern.MatchString(v)) {
		e.Add(field, "must be 1 to %d letters, digits, '.', '_', ':' or '-'", MaxNameLen)
	}
}

// Timestamp parses a required RFC 3339 field that must lie between maxAge
// before now and ahead after it; it returns the instant in UTC (zero when
// the field is bad).
func (e *Errors) Timestamp(field, s string, now time.Time, maxAge, ahead time.Duration) time.Time {
	if s == "" {
		e.Add(field, "is required (RFC 3339)")
		return time.Time{}
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		e.Add(field, "must be RFC 3339, like 2026-11-20T10:00:00.123Z")
		return time.Time{}
	}
	switch {
	case ts.After(now.Add(ahead)):
		e.Add(field, "is more than %s in the future", ahead)
	case ts.Before(now.Add(-maxAge)):
		e.Add(field, "is older than the accepted window of %s", maxAge)
	}
	return ts.UTC()
}
