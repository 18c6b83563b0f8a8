package expd

import (
	"io"
	"log/slog"
	"regexp"
	"testing"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestUUID4Format(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		u := uuid4()
		if !re.MatchString(u) || seen[u] {
			t.Fatalf("uuid4 %q: not a fresh version-4 UUID", u)
		}
		seen[u] = true
	}
}
