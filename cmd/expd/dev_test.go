package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/expd/expd/auth"
)

// TestDevEndToEnd runs the real binary: `expd dev` on free ports in a temp
// dir, creates and reads an experiment with the printed credentials,
// restarts, and finds data and credentials intact.
func TestDevEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildExpd(t)
	dir := t.TempDir()

	base, stop := startDev(t, bin, dir)
	creds := readCreds(t, dir)
	if creds.BaseURL != base || creds.OrgID == "" || !strings.HasPrefix(creds.PublishableKey, auth.PublishablePrefix) || !strings.HasPrefix(creds.SecretKey, auth.SecretPrefix) || creds.IdentityJWT == "" {
		t.Fatalf("credentials: %+v (base %s)", creds, base)
	}
	// The dev org starts on free like every org that never checked out.
	if creds.Plan != "free" || devPlan(t, base, creds) != "free" {
		t.Fatalf("dev org plan at first start: %q", creds.Plan)
	}
	exp := `{"name":"e2e","salt":"saltsalt","bucket_count":100,"allocation":[{"variant":"a","weight":1},{"variant":"b","weight":1}],"metrics":[]}`
	status, body := call(t, "POST", base+"/v1/experiments", creds.IdentityJWT, exp)
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct{ ID string }
	_ = json.Unmarshal(body, &created)
	status, body = call(t, "PUT", base+"/v1/experiments/e2e", creds.IdentityJWT, strings.Replace(exp, `"weight":1}]`, `"weight":3}]`, 1))
	if status != 200 || !strings.Contains(string(body), `"version":2`) {
		t.Fatalf("update: %d %s", status, body)
	}
	stop()

	base2, stop2 := startDev(t, bin, dir, "--plan", "enterprise")
	defer stop2()
	again := readCreds(t, dir)
	if again.Plan != "enterprise" || devPlan(t, base2, again) != "enterprise" {
		t.Fatalf("--plan enterprise: plan %q", again.Plan)
	}
	if again.IdentityJWT != creds.IdentityJWT || again.PublishableKey != creds.PublishableKey || again.SecretKey != creds.SecretKey || again.OrgID != creds.OrgID {
		t.Fatalf("credentials changed across restart:\n%+v\n%+v", creds, again)
	}
	status, body = call(t, "GET", base2+"/v1/experiments/"+created.ID, creds.IdentityJWT, "")
	if status != 200 || !strings.Contains(string(body), `"version":2`) || !strings.Contains(string(body), `"name":"e2e"`) {
		t.Fatalf("after restart: %d %s", status, body)
	}
	status, body = call(t, "GET", base2+"/readyz", "", "")
	if status != 200 {
		t.Fatalf("readyz: %d %s", status, body)
	}

	// A key rotated while it runs is the key of the next start: a new
	// user's restart after a rotation used to issue yet another key, and
	// the one just rotated to answered 401.
	rotated := map[string]string{}
	for _, scope := range []string{"publishable", "secret"} {
		status, body = call(t, "POST", base2+"/v1/keys", again.IdentityJWT, `{"scope":"`+scope+`"}`)
		var k struct{ Key string }
		if status != 201 || json.Unmarshal(body, &k) != nil || k.Key == "" {
			t.Fatalf("rotate %s: %d %s", scope, status, body)
		}
		rotated[scope] = k.Key
	}
	stop2()
	base3, stop3 := startDev(t, bin, dir)
	defer stop3()
	third := readCreds(t, dir)
	if third.PublishableKey != rotated["publishable"] || third.SecretKey != rotated["secret"] {
		t.Fatalf("after rotation and restart the file holds %s / %s, want the rotated %s / %s", third.PublishableKey, third.SecretKey, rotated["publishable"], rotated["secret"])
	}
	for _, key := range []string{third.PublishableKey, third.SecretKey} {
		if status, body := callKey(t, "GET", base3+"/v1/config", key); status != 200 {
			t.Fatalf("rotated key after restart: %d %s", status, body)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildExpd builds the binary once per test run (the tests share it).
func buildExpd(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "expd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "expd")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// TestMain removes the shared binary after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// devStartAttempts bounds how often startDev starts `expd dev` again when
// it exits before printing its addresses. The dev server retries a lost
// port itself (devserver.Start); this covers what it cannot, so that one
// unlucky start does not fail an unrelated test.
const devStartAttempts = 3

// startDev starts `expd dev` on free ports in dir and returns its API base
// URL and a stop function (also run at cleanup).
func startDev(t *testing.T, bin, dir string, extra ...string) (string, func()) {
	t.Helper()
	p := startDevEnv(t, bin, dir, nil, extra...)
	return p.base, p.stop
}

// startDevEnv is startDev with env added to the process's environment,
// returning the process.
func startDevEnv(t *testing.T, bin, dir string, env []string, extra ...string) *devProcess {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, err := startDevOnce(bin, dir, env, extra...)
		if err == nil {
			t.Cleanup(p.stop)
			return p
		}
		if attempt == devStartAttempts {
			t.Fatal(err)
		}
		t.Logf("start %d of expd dev failed, starting again: %v", attempt, err)
	}
}

// devProcess is a running `expd dev` and the addresses its banner printed.
type devProcess struct {
	base     string // the API's base URL
	temporal string // the embedded Temporal frontend's host:port
	stop     func() // interrupt, as an operator stops it
	kill     func() // SIGKILL, as a crash
}

// bannerLines are the banner's lines startDevOnce reads, by their label.
var bannerLines = []string{"API:", "Temporal:"}

// startDevOnce starts `expd dev` on free ports (every port 0) in dir and
// waits for its banner. It fails, with the process's stderr, when the
// process exits or prints nothing within three minutes. env is added to
// the process's environment.
func startDevOnce(bin, dir string, env []string, extra ...string) (*devProcess, error) {
	cmd := exec.Command(bin, append([]string{"dev", "--addr", "127.0.0.1:0", "--data-dir", dir,
		"--temporal-port", "0", "--temporal-http-port", "0", "--ui-port", "0"}, extra...)...)
	cmd.Env = append(append(os.Environ(), "DATABASE_URL=", "TEMPORAL_ADDRESS=", "EXPD_LOG_LEVEL=warn"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	banner := make(chan map[string]string, 1)
	go func() {
		found := map[string]string{}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			for _, label := range bannerLines {
				if rest, ok := strings.CutPrefix(line, label); ok {
					found[label] = strings.TrimSpace(rest)
				}
			}
			if len(found) == len(bannerLines) {
				banner <- found
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case found := <-banner:
		return &devProcess{base: found["API:"], temporal: found["Temporal:"], stop: stop, kill: kill}, nil
	case <-exited:
		return nil, fmt.Errorf("expd dev exited (%v) before printing its addresses; stderr:\n%s", cmd.ProcessState, stderr.String())
	case <-time.After(3 * time.Minute):
		stop()
		return nil, fmt.Errorf("expd dev did not print its addresses within 3 minutes; stderr:\n%s", stderr.String())
	}
}

// syncBuffer is a bytes.Buffer the process's stderr copier and the test
// can use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func readCreds(t *testing.T, dir string) DevCredentials {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, credentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	var c DevCredentials
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func call(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	if token == "" {
		return request(t, method, url, "", "", body)
	}
	return request(t, method, url, "Authorization", "Bearer "+token, body)
}

// callKey sends a request with an SDK key.
func callKey(t *testing.T, method, url, key string) (int, []byte) {
	t.Helper()
	return request(t, method, url, "X-API-Key", key, "")
}

// request sends one request with one credential header (none when name is "").
func request(t *testing.T, method, url, name, value, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if name != "" {
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// devPlan is the dev org's plan as the billing summary reports it.
func devPlan(t *testing.T, base string, creds DevCredentials) string {
	t.Helper()
	status, body := call(t, "GET", base+"/v1/billing/summary", creds.IdentityJWT, "")
	var summary struct{ Plan string }
	if status != 200 || json.Unmarshal(body, &summary) != nil {
		t.Fatalf("billing summary: %d %s", status, body)
	}
	return summary.Plan
}
