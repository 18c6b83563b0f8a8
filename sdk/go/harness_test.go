package expd

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/expd/expd/sdk/go/internal/expddev"
)

// fakeExpd stands in for the expd binary; its header says how.
var fakeExpd = filepath.Join("..", "..", "testdata", "harness", "fake-expd-dev.sh")

// fakeExpdFailing sets the fake to exit `failures` times and returns a count
// of its starts.
func fakeExpdFailing(t *testing.T, failures int) func() int {
	t.Helper()
	state := t.TempDir()
	t.Setenv("FAKE_EXPD_STATE", state)
	if err := os.WriteFile(filepath.Join(state, "fail-count"), []byte(strconv.Itoa(failures)), 0o600); err != nil {
		t.Fatal(err)
	}
	return func() int {
		raw, err := os.ReadFile(filepath.Join(state, "starts"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(raw), "\n")
	}
}

// A start of `expd dev` that exits before its banner is run again, up to
// expddev.StartAttempts times, and the last failure shows its stderr.
func TestStartDevRetriesAStartThatExitsEarly(t *testing.T) {
	starts := fakeExpdFailing(t, expddev.StartAttempts-1)
	cmd, base, err := expddev.StartRetrying(fakeExpd, t.TempDir())
	if err != nil {
		t.Fatalf("start after %d early exits: %v", expddev.StartAttempts-1, err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if base != "http://127.0.0.1:4321" || starts() != expddev.StartAttempts {
		t.Fatalf("base %q after %d starts, want the banner's after %d", base, starts(), expddev.StartAttempts)
	}

	starts = fakeExpdFailing(t, expddev.StartAttempts)
	_, _, err = expddev.StartRetrying(fakeExpd, t.TempDir())
	if !errors.Is(err, expddev.ErrExitedEarly) || !strings.Contains(err.Error(), "address already in use") || starts() != expddev.StartAttempts {
		t.Fatalf("start that always exits: %v after %d starts, want expddev.ErrExitedEarly with the stderr after %d", err, starts(), expddev.StartAttempts)
	}
}
