package expd

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeExpd stands in for the expd binary: it exits 1 while the file
// fail-count next to it holds a positive number (counting it down), then
// prints the banner and waits for SIGINT like `expd dev`.
const fakeExpd = `#!/bin/sh
state=$(dirname "$0")
echo start >> "$state/starts"
left=$(cat "$state/fail-count")
if [ "$left" -gt 0 ]; then echo $((left - 1)) > "$state/fail-count"; echo "bind: address already in use" >&2; exit 1; fi
echo "  API:         http://127.0.0.1:4321"
trap 'exit 0' INT
while :; do sleep 0.1; done
`

// writeFakeExpd writes fakeExpd, set to fail `failures` times, and returns
// its path and a count of its starts.
func writeFakeExpd(t *testing.T, failures int) (string, func() int) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "expd")
	if err := os.WriteFile(bin, []byte(fakeExpd), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fail-count"), []byte(strconv.Itoa(failures)), 0o600); err != nil {
		t.Fatal(err)
	}
	return bin, func() int {
		raw, err := os.ReadFile(filepath.Join(dir, "starts"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(raw), "\n")
	}
}

// A start of `expd dev` that exits before its banner is run again, up to
// devStartAttempts times, and the last failure names what it printed.
func TestStartDevRetriesAStartThatExitsEarly(t *testing.T) {
	bin, starts := writeFakeExpd(t, devStartAttempts-1)
	cmd, base, err := startDevRetrying(bin, t.TempDir())
	if err != nil {
		t.Fatalf("start after %d early exits: %v", devStartAttempts-1, err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if base != "http://127.0.0.1:4321" || starts() != devStartAttempts {
		t.Fatalf("base %q after %d starts, want the banner's after %d", base, starts(), devStartAttempts)
	}

	bin, starts = writeFakeExpd(t, devStartAttempts)
	_, _, err = startDevRetrying(bin, t.TempDir())
	if !errors.Is(err, errExitedEarly) || !strings.Contains(err.Error(), "address already in use") || starts() != devStartAttempts {
		t.Fatalf("start that always exits: %v after %d starts, want errExitedEarly with the stderr after %d", err, starts(), devStartAttempts)
	}
}
