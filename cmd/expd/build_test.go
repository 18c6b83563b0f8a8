package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProductionBuild checks the production build (-tags noembedded, what
// the Dockerfile builds): it compiles, and neither the embedded Temporal
// server nor the Temporal UI server is linked into it.
func TestProductionBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	out, err := exec.Command("go", "list", "-tags", "noembedded", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -tags noembedded -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.temporal.io/server", "github.com/temporalio/ui-server", "github.com/expd/expd/devserver"} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("the noembedded build links %s", pkg)
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "expd")
	if out, err := exec.Command("go", "build", "-tags", "noembedded", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags noembedded: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "dev")
	cmd.Env = append(os.Environ(), "DATABASE_URL=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "noembedded") {
		t.Errorf("expd dev of the noembedded build: err %v, output %s; want a refusal naming the tag", err, out)
	}
}
