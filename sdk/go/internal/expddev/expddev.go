// Package expddev runs a real `expd dev` built from this checkout for the
// Go client's live tests and its integrations' (the OpenFeature provider's
// module imports it too: internal by path, sdk/go/...): free ports, a
// temporary data dir, SQLite, embedded Temporal, rate limits off.
package expddev

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Dev is one running `expd dev` and its dev credentials.
type Dev struct {
	BaseURL, APIKey, JWT string
	cmd                  *exec.Cmd
}

// StartAttempts bounds how often Start runs `expd dev` again when it exits
// before printing its API address. The dev server retries a port lost to
// another process itself; this covers what it cannot, so that one unlucky
// start does not fail every live test.
const StartAttempts = 3

// ErrExitedEarly: the process ended before its banner.
var ErrExitedEarly = errors.New("expd dev exited before printing its API address")

// Build compiles ./cmd/expd of the repository at repoRoot into a temporary
// directory and returns the binary's path.
func Build(repoRoot string) (string, error) {
	dir, err := os.MkdirTemp("", "expd-go-live-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "expd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/expd")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/expd: %v\n%s", err, out)
	}
	return bin, nil
}

// Start runs bin as `expd dev` in a fresh data dir beside it and reads the
// dev credentials it writes.
func Start(bin string) (*Dev, error) {
	data := filepath.Join(filepath.Dir(bin), "data")
	cmd, base, err := StartRetrying(bin, data)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(data, "dev-credentials.json"))
	if err != nil {
		return nil, err
	}
	var cred struct {
		PublishableKey string `json:"publishable_key"`
		IdentityJWT    string `json:"identity_jwt"`
	}
	if err := json.Unmarshal(raw, &cred); err != nil {
		return nil, err
	}
	return &Dev{BaseURL: base, APIKey: cred.PublishableKey, JWT: cred.IdentityJWT, cmd: cmd}, nil
}

// Stop interrupts the server and waits up to 30 s before killing it.
func (d *Dev) Stop() {
	if d == nil || d.cmd == nil || d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
	}
}

// StartRetrying runs `expd dev` (StartOnce), again when it exits before its
// banner, up to StartAttempts times.
func StartRetrying(bin, data string) (cmd *exec.Cmd, base string, err error) {
	for attempt := 1; ; attempt++ {
		cmd, base, err = StartOnce(bin, data)
		if err == nil || !errors.Is(err, ErrExitedEarly) || attempt == StartAttempts {
			return cmd, base, err
		}
	}
}

// StartOnce runs `expd dev` on free ports in data and returns it with the
// API address its banner prints.
func StartOnce(bin, data string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, "dev", "--addr", "127.0.0.1:0", "--data-dir", data, "--temporal-port", "0", "--temporal-http-port", "0", "--ui-port", "-1",
		"--plan", "enterprise") // the tests' load would hit the free plan's limits
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "TEMPORAL_ADDRESS=", "EXPD_LOG_LEVEL=warn", "EXPD_RATE_LIMITS=*=off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	found := make(chan string, 1)
	go func() {
		api := regexp.MustCompile(`^\s*API:\s*(\S+)`)
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if m := api.FindStringSubmatch(lines.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok {
			// stdout closed without a banner: the process ended (Wait reads stderr to its end).
			err := cmd.Wait()
			return nil, "", fmt.Errorf("%w (%v); stderr:\n%s", ErrExitedEarly, err, stderr.String())
		}
		return cmd, base, nil
	case <-time.After(180 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("expd dev did not start within 180 s; stderr:\n%s", stderr.String())
	}
}

// Call sends one JSON request, with the dev identity JWT (jwt) or the
// publishable key, and returns the status and the raw answer.
func (d *Dev) Call(method, path string, body any, jwt bool) (int, json.RawMessage, error) {
	var rd io.Reader = bytes.NewReader(nil)
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, d.BaseURL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if jwt {
		req.Header.Set("Authorization", "Bearer "+d.JWT)
	} else {
		req.Header.Set("X-API-Key", d.APIKey)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, err
}

// Assignment is one POST /v1/assign answer.
type Assignment struct {
	Variant      string `json:"variant"`
	InExperiment bool   `json:"in_experiment"`
	ReasonCode   string `json:"reason_code"`
}

// AssignAll asks POST /v1/assign for every user, eight at a time.
func (d *Dev) AssignAll(ref string, users []string) ([]Assignment, error) {
	out := make([]Assignment, len(users))
	errs := make([]error, len(users))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				status, raw, err := d.Call("POST", "/v1/assign", map[string]string{"experiment_id": ref, "user_id": users[i]}, false)
				if err == nil && status != http.StatusOK {
					err = fmt.Errorf("assign %s: %d %s", users[i], status, raw)
				}
				if err == nil {
					err = json.Unmarshal(raw, &out[i])
				}
				errs[i] = err
			}
		}()
	}
	for i := range users {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

// ExperimentConfig is a running-ready config: name, weights as variant,
// weight pairs, each variant with variables {"arm": variant}.
func ExperimentConfig(name string, weights ...any) map[string]any {
	var alloc []map[string]any
	variants := map[string]any{}
	for i := 0; i < len(weights); i += 2 {
		alloc = append(alloc, map[string]any{"variant": weights[i], "weight": weights[i+1]})
		variants[weights[i].(string)] = map[string]any{"variables": map[string]any{"arm": weights[i]}}
	}
	return map[string]any{"name": name, "salt": "go-live-tests", "bucket_count": 10000, "allocation": alloc, "variants": variants, "metrics": []any{}}
}
