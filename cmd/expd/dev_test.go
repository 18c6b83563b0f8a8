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

func startDev(t *testing.T, bin, dir string, extra ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"dev", "--addr", "127.0.0.1:0", "--data-dir", dir,
		"--temporal-port", "0", "--temporal-http-port", "0", "--ui-port", "0"}, extra...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "TEMPORAL_ADDRESS=", "EXPD_LOG_LEVEL=warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "API:"); ok {
				found <- strings.TrimSpace(rest)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case base := <-found:
		return base, stop
	case <-time.After(3 * time.Minute):
		stop()
		t.Fatalf("expd dev did not print its API address; stderr:\n%s", stderr.String())
	}
	return "", stop
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
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
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
