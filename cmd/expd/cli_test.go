package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/expd/expd/auth"
	"github.com/expd/expd/cli"
)

// cliResult is one run of an expd CLI command.
type cliResult struct {
	code           int
	stdout, stderr string
}

// expdCLI runs the binary's CLI with its credentials from env only (a
// fresh config dir, the dev data dir given), stdout piped.
func expdCLI(t *testing.T, bin string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic") {
		t.Fatalf("expd %v printed a stack:\n%s", args, errb.String())
	}
	return cliResult{code, out.String(), errb.String()}
}

func (r cliResult) want(t *testing.T, code int, what string) cliResult {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
	return r
}

const cliExperimentYAML = `# an experiment as a team would keep it in its repository
name: checkout-prompt
salt: checkout-2026
bucket_count: 1000
allocation:
  - variant: control
    weight: 50
  - variant: concise
    weight: 50
variants:
  concise:
    prompt: "Answer in one sentence."
metrics:
  - name: conversion
    kind: proportion
    category: primary
    method_default: z_test
    metric_version: 1
    shared_org_wide: false
    source: {event_type: business_event, business_metric: purchase}
  - name: latency_ms
    kind: mean
    category: guardrail
    method_default: welch_t
    metric_version: 1
    shared_org_wide: false
`

// TestCLIEndToEnd drives the CLI against a real expd dev the way a person
// or a CI job would: credentials picked up from expd dev, an experiment
// created from YAML, events imported, a run started with --wait, results
// read as a table and as JSON; then a management token through login.
func TestCLIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildExpd(t)
	dir := t.TempDir()
	_, stop := startDev(t, bin, dir)
	defer stop()
	work := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(work, "config"), "EXPD_DEV_DATA_DIR=" + dir, "EXPD_URL=", "EXPD_TOKEN=", "EXPD_SECRET_KEY="}
	run := func(args ...string) cliResult { return expdCLI(t, bin, env, args...) }

	file := filepath.Join(work, "experiment.yaml")
	if err := os.WriteFile(file, []byte(cliExperimentYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run("experiments", "create", "-f", file, "--table").want(t, cli.ExitOK, "create from YAML").stdout
	for _, s := range []string{"checkout-prompt", "concise", "50", "z_test"} {
		if !strings.Contains(out, s) {
			t.Fatalf("create table lacks %q:\n%s", s, out)
		}
	}
	var got struct {
		ID       string `json:"id"`
		Version  int    `json:"version"`
		Variants map[string]struct{ Prompt string }
	}
	if err := json.Unmarshal([]byte(run("experiments", "get", "checkout-prompt").want(t, 0, "get").stdout), &got); err != nil || got.Version != 1 || got.Variants["concise"].Prompt != "Answer in one sentence." {
		t.Fatalf("get as JSON (piped): %+v %v", got, err)
	}
	// Errors: the problem's detail, a meaningful exit code.
	r := run("experiments", "create", "-f", file).want(t, cli.ExitRejected, "duplicate create")
	if !strings.Contains(r.stderr, "name") {
		t.Fatalf("duplicate create: %q", r.stderr)
	}
	run("experiments", "get", "nope").want(t, cli.ExitNotFound, "unknown experiment")
	run("results", "checkout-prompt").want(t, cli.ExitNotFound, "results while collecting")
	run("experiments", "create").want(t, cli.ExitUsage, "create without -f")
	run("results").want(t, cli.ExitUsage, "results without experiment")

	// Events stamped after the experiment's creation, one bad line.
	events := filepath.Join(work, "events.ndjson")
	writeEvents(t, events, time.Now().UTC())
	time.Sleep(1100 * time.Millisecond) // the run's window ends at its own second
	r = run("events", "import", events, "--table").want(t, cli.ExitImportPart, "import with a bad line")
	if !strings.Contains(r.stdout, "1 rejected") || !strings.Contains(r.stdout, "line ") {
		t.Fatalf("import summary: %s", r.stdout)
	}
	time.Sleep(1100 * time.Millisecond)

	var runView struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Rows   int    `json:"rows"`
	}
	r = run("runs", "start", "checkout-prompt", "--wait").want(t, 0, "runs start --wait")
	if err := json.Unmarshal([]byte(r.stdout), &runView); err != nil || runView.Status != "completed" || runView.Rows != 2 {
		t.Fatalf("run: %s (%v)", r.stdout, err)
	}

	table := run("results", "checkout-prompt", "--table").want(t, 0, "results table").stdout
	// latency_ms is a built-in whose goal is decrease: the faster arm is
	// better, not "higher" or "lower".
	for _, s := range []string{"verdict: ", "METRIC", "DECISION", "conversion", "latency_ms", "concise vs control", "better (goal: decrease)", "95% CI", "|", "[", "o"} {
		if !strings.Contains(table, s) {
			t.Fatalf("results table lacks %q:\n%s", s, table)
		}
	}
	var res struct {
		ComputedFor string `json:"computed_for"`
		Metrics     []struct {
			Metric    string  `json:"metric"`
			PValueFDR float64 `json:"p_value_fdr"`
			Effect    float64 `json:"effect"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(run("results", "checkout-prompt", "--json").want(t, 0, "results JSON").stdout), &res); err != nil || res.ComputedFor != runView.RunID || len(res.Metrics) != 2 {
		t.Fatalf("results JSON: %+v %v", res, err)
	}
	t.Logf("results table:\n%s", table)

	// Keys: a new secret key in the checksummed format.
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(run("keys", "rotate", "secret").want(t, 0, "keys rotate").stdout), &key); err != nil || !strings.HasPrefix(key.Key, auth.SecretPrefix) {
		t.Fatalf("rotated key: %+v %v", key, err)
	}

	// A management token for CI: created with the dev session, stored by
	// login, used without expd dev's credentials, revoked.
	var tok struct{ ID, Token string }
	if err := json.Unmarshal([]byte(run("tokens", "create", "ci", "--role", "admin").want(t, 0, "tokens create").stdout), &tok); err != nil || !auth.IsManagementToken(tok.Token) {
		t.Fatalf("token: %+v %v", tok, err)
	}
	member := struct{ Token string }{} // made now: after login the stored token is no session to mint it
	if err := json.Unmarshal([]byte(run("tokens", "create", "ci-read", "--role", "member").want(t, 0, "member token").stdout), &member); err != nil {
		t.Fatal(err)
	}
	base := readCreds(t, dir).BaseURL
	noDev := append(env, "EXPD_DEV_DATA_DIR="+filepath.Join(work, "none"))
	expdCLI(t, bin, noDev, "experiments", "list").want(t, cli.ExitUsage, "no credentials at all")
	expdCLI(t, bin, noDev, "login", "--url", base, "--token", "expd_mt_wrong").want(t, cli.ExitAuth, "login with a bad token")
	expdCLI(t, bin, noDev, "login", "--url", base, "--token", tok.Token).want(t, 0, "login")
	out = expdCLI(t, bin, noDev, "experiments", "list", "--table").want(t, 0, "list as the token").stdout
	if !strings.Contains(out, "checkout-prompt") {
		t.Fatalf("list with the stored token:\n%s", out)
	}
	// Start and stop through the lifecycle routes, as the admin token:
	// each change is a new version, repeating one changes nothing.
	status := func(args ...string) (string, int) {
		t.Helper()
		var x struct {
			Status  string `json:"status"`
			Version int    `json:"version"`
		}
		if err := json.Unmarshal([]byte(expdCLI(t, bin, noDev, args...).want(t, 0, strings.Join(args, " ")).stdout), &x); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return x.Status, x.Version
	}
	_, v0 := status("experiments", "get", "checkout-prompt")
	for i, step := range []struct {
		sub, want string
		bump      int
	}{{"stop", "stopped", 1}, {"stop", "stopped", 0}, {"start", "running", 1}, {"start", "running", 0}} {
		st, v := status("experiments", step.sub, "checkout-prompt")
		if st != step.want || v != v0+step.bump {
			t.Fatalf("step %d, %s: status %q version %d, want %q version %d", i, step.sub, st, v, step.want, v0+step.bump)
		}
		v0 = v
	}
	var audited struct {
		Entries []struct{ Action, Actor string }
	}
	expdCLIJSON(t, base, tok.Token, "/v1/audit?experiment_id=checkout-prompt&action=experiment.stopped", &audited)
	if len(audited.Entries) != 1 || audited.Entries[0].Actor != "management_token:"+tok.ID {
		t.Fatalf("the stop is not audited as the token: %+v", audited)
	}
	expdCLI(t, bin, append(noDev, "EXPD_TOKEN="+member.Token, "EXPD_URL="+base), "experiments", "stop", "checkout-prompt").want(t, cli.ExitAuth, "stop as a member")

	// A merge patch changes the weights only; a stale --if-match is refused.
	patchFile := filepath.Join(work, "weights.yaml")
	if err := os.WriteFile(patchFile, []byte("allocation:\n  - {variant: control, weight: 20}\n  - {variant: concise, weight: 80}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, v := status("experiments", "patch", "checkout-prompt", "-f", patchFile, "--if-match", strconv.Itoa(v0)); st != "running" || v != v0+1 {
		t.Fatalf("patch: status %q version %d, want running %d", st, v, v0+1)
	}
	expdCLI(t, bin, noDev, "experiments", "patch", "checkout-prompt", "-f", patchFile, "--if-match", strconv.Itoa(v0)).want(t, cli.ExitRejected, "stale --if-match")
	if st, _ := status("experiments", "ship", "checkout-prompt", "concise"); st != "shipped" {
		t.Fatalf("ship: status %q", st)
	}

	run("tokens", "revoke", tok.ID).want(t, 0, "revoke")
	expdCLI(t, bin, noDev, "experiments", "list").want(t, cli.ExitAuth, "revoked token")
}

// writeEvents writes 400 users' exposures, model calls and conversions
// (the concise arm converts more and answers faster) and one bad line.
func writeEvents(t *testing.T, path string, at time.Time) {
	t.Helper()
	var b bytes.Buffer
	line := func(m map[string]any) {
		m["event_id"], m["experiment_id"], m["timestamp"] = uuid.NewString(), "checkout-prompt", at.Format(time.RFC3339Nano)
		enc, _ := json.Marshal(m)
		b.Write(append(enc, '\n'))
	}
	for i := 0; i < 400; i++ {
		user, variant, latency, converts := fmt.Sprintf("user-%d", i), "control", 800+i%50, i%5 == 0
		if i%2 == 1 {
			variant, latency, converts = "concise", 600+i%50, i%5 == 1 || i%5 == 3
		}
		line(map[string]any{"type": "exposure", "user_id": user, "variant": variant})
		line(map[string]any{"type": "model_call", "user_id": user, "variant": variant, "latency_ms": latency, "model": "m"})
		if converts {
			line(map[string]any{"type": "business_event", "user_id": user, "variant": variant, "business_metric": "purchase", "value": 1})
		}
	}
	b.WriteString(`{"type": "exposure", "user_id": 7}` + "\n")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// expdCLIJSON reads a route with a bearer token, outside the CLI, to check
// what the CLI's commands did.
func expdCLIJSON(t *testing.T, base, token, path string, v any) {
	t.Helper()
	status, body := call(t, http.MethodGet, base+path, token, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
