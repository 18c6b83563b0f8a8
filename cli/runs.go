package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

type runView struct {
	RunID       string `json:"run_id"`
	Status      string `json:"status"`
	ComputedFor string `json:"computed_for"`
	Kind        string `json:"kind"`
	Rows        *int   `json:"rows"`
	Error       string `json:"error"`
}

// pollEvery is how often runs start --wait asks for the run's state.
const pollEvery = 500 * time.Millisecond

// runRuns is `expd runs start EXPERIMENT [--wait] [--day D]` and
// `expd runs get EXPERIMENT RUN`.
func runRuns(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "start" && args[0] != "get" && args[0] != "backfill") {
		return usagef("usage: expd %s", e.usage)
	}
	sub := args[0]
	if sub == "backfill" {
		return runsBackfill(ctx, e, args[1:])
	}
	fs := e.flags(sub)
	wait := fs.Bool("wait", false, "follow the run to its end (exit 6 when it fails)")
	day := fs.String("day", "", "compute (or recompute) this nightly day, YYYY-MM-DD (admin)")
	n := map[string]int{"start": 1, "get": 2}[sub]
	pos, c, err := e.setup(fs, args[1:], n, "EXPERIMENT, and RUN for get")
	if err != nil {
		return err
	}
	base := experimentPath(pos[0]) + "/runs"
	var run runView
	var raw json.RawMessage
	if sub == "get" {
		if err := c.Do(ctx, "GET", base+"/"+url.PathEscape(pos[1]), nil, &raw); err != nil {
			return err
		}
	} else {
		var body any
		if *day != "" {
			body = map[string]string{"day": *day}
		}
		if err := c.Do(ctx, "POST", base, body, &raw); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(raw, &run); err != nil {
		return fmt.Errorf("unexpected run body: %w", err)
	}
	if sub == "start" && *wait {
		if raw, err = e.follow(ctx, c, base+"/"+url.PathEscape(run.RunID), &run); err != nil {
			return err
		}
	}
	if err := e.showRun(raw, run); err != nil {
		return err
	}
	if run.Status == "failed" {
		return exitError{ExitRunFailed, "run " + run.RunID + " failed: " + run.Error}
	}
	return nil
}

// follow polls the run until it leaves running, drawing a status line on
// a terminal.
func (e *env) follow(ctx context.Context, c *Client, path string, run *runView) (json.RawMessage, error) {
	start := time.Now()
	spin := []rune(`|/-\`)
	var raw json.RawMessage
	for i := 0; ; i++ {
		if err := c.Do(ctx, "GET", path, nil, &raw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, run); err != nil {
			return nil, fmt.Errorf("unexpected run body: %w", err)
		}
		if e.io.StderrTerminal {
			fmt.Fprintf(e.io.Stderr, "\r%c run %s: %s, %s ", spin[i%len(spin)], run.RunID, run.Status, time.Since(start).Round(100*time.Millisecond))
		}
		if run.Status != "running" {
			if e.io.StderrTerminal {
				fmt.Fprintln(e.io.Stderr)
			}
			return raw, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

func (e *env) showRun(raw json.RawMessage, run runView) error {
	if !e.table() {
		_, err := fmt.Fprintf(e.io.Stdout, "%s\n", raw)
		return err
	}
	tw := newTable(e.io.Stdout)
	row(tw, "run", run.RunID)
	row(tw, "kind", run.Kind)
	row(tw, "status", run.Status)
	if run.Rows != nil {
		row(tw, "rows", fmt.Sprint(*run.Rows))
	}
	if run.Error != "" {
		row(tw, "error", run.Error)
	}
	return tw.Flush()
}

// runsBackfill is `expd runs backfill --from D --to D` (admin): every
// nightly day of the range for every running experiment of the org.
func runsBackfill(ctx context.Context, e *env, args []string) error {
	fs := e.flags("backfill")
	from := fs.String("from", "", "first day, YYYY-MM-DD")
	to := fs.String("to", "", "last day, YYYY-MM-DD (a day that has ended)")
	if _, err := e.parse(fs, args, 0, "--from D --to D"); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return usagef("--from and --to are required")
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.Do(ctx, "POST", "/v1/runs/backfill", map[string]string{"from": *from, "to": *to}, &raw); err != nil {
		return err
	}
	if !e.table() {
		_, err := fmt.Fprintf(e.io.Stdout, "%s\n", raw)
		return err
	}
	var started struct {
		WorkflowID string `json:"workflow_id"`
	}
	_ = json.Unmarshal(raw, &started)
	fmt.Fprintf(e.io.Stdout, "Backfill of %s to %s started (workflow %s); results appear per day as they complete.\n", *from, *to, started.WorkflowID)
	return nil
}
