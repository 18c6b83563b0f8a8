// Package pagecursor is the opaque keyset cursor of newest-first listings
// (the audit log, webhook deliveries): the (time, id) of the last row
// served, so the next page starts strictly after it.
package pagecursor

import (
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ErrInvalid is returned for a cursor this server did not issue.
var ErrInvalid = errors.New("cursor is not one this server issued")

// Encode makes the cursor of the row at (at, id).
func Encode(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "|" + id))
}

// Decode reads a cursor Encode made over a row whose id is a UUID.
func Decode(s string) (time.Time, string, error) {
	return DecodeID(s, func(id string) bool { return uuid.Validate(id) == nil })
}

// DecodeID reads a cursor whose id must pass validID (ids a client
// minted, such as event ids, are not UUIDs).
func DecodeID(s string, validID func(string) bool) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", ErrInvalid
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	if !ok || !validID(id) {
		return time.Time{}, "", ErrInvalid
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, "", ErrInvalid
	}
	return at, id, nil
}
