// Package stripemock runs the real stripe-mock binary (Stripe's own API
// mock, built from its OpenAPI spec) for tests, so the billing adapter is
// tested against Stripe's request validation instead of a hand-made fake.
//
// The binary is taken from PATH or $(go env GOPATH)/bin; failing that it is
// built once with `go install github.com/stripe/stripe-mock@<Version>` into
// the user cache dir, so tests need nothing but Go and the module proxy.
package stripemock

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Version is the stripe-mock release built when none is installed.
const Version = "v0.203.0"

// startTimeout bounds waiting for stripe-mock to listen: it parses Stripe's
// whole OpenAPI document first, which took over 30 s at load average 15.
const startTimeout = 3 * time.Minute

// Server is one running stripe-mock.
type Server struct {
	URL      string    // http://127.0.0.1:<port>, for STRIPE_API_BASE
	Recorder *Recorder // sees every request sent through HTTPClient
}

// HTTPClient sends requests to stripe-mock through the Recorder.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Transport: s.Recorder, Timeout: 10 * time.Second}
}

var listening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)

// Start runs a stripe-mock on free ports for the test and stops it at
// cleanup. It fails the test when the binary can neither be found nor built.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("stripemock: %v", err)
	}
	// Both listeners on free ports: stripe-mock's default HTTPS port would
	// collide between test binaries running at once.
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stripemock: %v", err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("stripemock: start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr, err := waitListening(out)
	if err != nil {
		t.Fatalf("stripemock: %v", err)
	}
	return &Server{URL: "http://" + addr, Recorder: newRecorder()}
}

// waitListening reads stripe-mock's output until it names its HTTP
// address, then keeps draining it so the process never blocks on a full pipe.
func waitListening(out io.Reader) (string, error) {
	found := make(chan string, 1)
	lines := make([]string, 0, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				continue
			}
			if len(lines) < cap(lines) {
				lines = append(lines, sc.Text())
			}
		}
	}()
	select {
	case addr := <-found:
		return addr, nil
	case <-done:
		return "", fmt.Errorf("stripe-mock exited before listening: %s", strings.Join(lines, " | "))
	case <-time.After(startTimeout):
		return "", fmt.Errorf("stripe-mock did not listen within %s", startTimeout)
	}
}
