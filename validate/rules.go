package validate

import (
	"regexp"
	"strings"
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

var saltPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// MaxVariantLen bounds a variant's name (an experiment's, an event's).
const MaxVariantLen = 64

// The rules every ingested event is checked against (ids, variants,
// names) are byte loops, not regexps: a regexp's match was a third of an
// event's check in the ingest profile (docs/scale.md).

// ValidToken says whether v is 1 to max bytes, a letter or digit first,
// then letters, digits or bytes of punct.
func ValidToken(v string, max int, punct string) bool {
	if v == "" || len(v) > max || !alnum(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; !alnum(c) && strings.IndexByte(punct, c) < 0 {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ValidVariant says whether v is a variant's name: 1 to MaxVariantLen
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func ValidVariant(v string) bool { return ValidToken(v, MaxVariantLen, "._-") }

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

// ValidID says whether v is an id a client may mint (UUIDs, webhook
// message ids): 1 to MaxIDLen printable ASCII characters without spaces.
func ValidID(v string) bool {
	if v == "" || len(v) > MaxIDLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// Name checks a non-empty metric-style name (the caller says how a
// missing one is wrong): letters, digits, '.', '_', ':' and '-', starting
// with a letter or digit.
func (e *Errors) Name(field, v string) {
	if v != "" && !ValidToken(v, MaxNameLen, "._:-") {
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
