package testenv

import (
	"encoding/json"
	"testing"
)

// Marshal is json.Marshal that fails the test on error.
func Marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ExpectJSON checks that r has status and decodes its body into v.
func (r Response) ExpectJSON(t testing.TB, status int, v any) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	r.JSON(t, v)
}
