package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// concurrentDevs is how many `expd dev` TestDevStartsManyAtOnce starts at once.
const concurrentDevs = 8

// Many `expd dev` started at the same moment with every port 0 all come up
// on the first try (no startDev retry here): each picks and holds its own
// ports, and a Temporal port lost to another instance between its release
// and Temporal's bind is picked again instead of crashing the process.
func TestDevStartsManyAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildExpd(t)
	procs := make([]*devProcess, concurrentDevs)
	errs := make([]error, concurrentDevs)
	var wg sync.WaitGroup
	for i := range concurrentDevs {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[i], errs[i] = startDevOnce(bin, dir, nil)
		}()
	}
	wg.Wait()
	for _, p := range procs {
		if p != nil {
			t.Cleanup(p.stop)
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[string]int{}
	for i, p := range procs {
		for _, path := range []string{"/healthz", "/readyz"} {
			if status, body := call(t, "GET", p.base+path, "", ""); status != http.StatusOK {
				t.Errorf("instance %d: GET %s = %d %s", i, path, status, body)
			}
		}
		assertTemporalServes(t, ctx, p.temporal)
		for _, addr := range []string{p.base, p.temporal} {
			if j, dup := seen[addr]; dup {
				t.Errorf("instances %d and %d both print %s", j, i, addr)
			}
			seen[addr] = i
		}
	}
}

// assertTemporalServes dials the Temporal frontend at address and asks it
// for the default namespace.
func assertTemporalServes(t *testing.T, ctx context.Context, address string) {
	t.Helper()
	c, err := client.DialContext(ctx, client.Options{HostPort: address})
	if err != nil {
		t.Errorf("dial Temporal at %s: %v", address, err)
		return
	}
	defer c.Close()
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"}); err != nil {
		t.Errorf("Temporal at %s: describe namespace: %v", address, err)
	}
}
