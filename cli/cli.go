// Package cli is expd's command line for people and scripts: login, the
// experiments, results, runs, events, keys, tokens, erasures and exports
// commands. It talks
// to an expd server over its HTTP API only, prints a table on a terminal
// and JSON when piped (or with --json), and exits with a code that says
// what went wrong (see ExitCode). cmd/expd calls Run for these commands.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes of every command; documented in docs/cli.md.
const (
	ExitOK         = 0
	ExitFailure    = 1 // server error (5xx), network failure, unexpected answer
	ExitUsage      = 2 // bad flags or arguments, unreadable file, no credentials
	ExitAuth       = 3 // 401 or 403: missing, invalid or insufficient credentials
	ExitNotFound   = 4 // 404: no such experiment or run; results still collecting
	ExitRejected   = 5 // other 4xx: the server refused the input (400, 409, 413, 429, ...)
	ExitRunFailed  = 6 // runs start --wait: the run ended failed
	ExitImportPart = 7 // events import: some lines were rejected (the rest were stored)
)

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// StdoutTerminal and StdinTerminal tell whether a person is there:
	// tables and progress then, JSON and no prompts otherwise.
	StdoutTerminal bool
	StdinTerminal  bool
	StderrTerminal bool
}

// command is one CLI command: usage line, help, and its run function.
type command struct {
	usage string
	help  string
	run   func(ctx context.Context, e *env, args []string) error
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"login":       {"login [--url URL] [--token TOKEN]", "store the server address and a management token (or identity session token) for later commands", runLogin},
		"logout":      {"logout", "forget the stored credentials", runLogout},
		"experiments": {"experiments list|get|create|update|patch|start|stop|ship|power ...", "manage experiments; power: the minimum detectable effect or the days needed", runExperiments},
		"results":     {"results EXPERIMENT [--day D]", "show an experiment's results: a table and a CI plot per metric", runResults},
		"runs":        {"runs start EXPERIMENT [--wait] [--day D] | runs get EXPERIMENT RUN | runs backfill --from D --to D", "start a results run (or a nightly day, or a range for the org) and follow it", runRuns},
		"events":      {"events import FILE", "import historical events (NDJSON) with a progress bar", runEvents},
		"keys":        {"keys rotate publishable|secret", "issue a new SDK key of a scope (the previous one stops working)", runKeys},
		"tokens":      {"tokens create|list|revoke ...", "manage org management tokens for scripts and CI", runTokens},
		"erasures":    {"erasures create USER_ID | erasures get ID", "erase one user's data (docs/privacy.md) and follow the erasure", runErasures},
		"exports":     {"exports create USER_ID", "export one user's events, scores and assignments as NDJSON to stdout", runExports},
	}
}

// Commands are the names cmd/expd hands to Run.
func Commands() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Usage is the CLI part of `expd --help`.
func Usage() string {
	var b strings.Builder
	for _, n := range Commands() {
		c := commands[n]
		fmt.Fprintf(&b, "  expd %s\n      %s\n", c.usage, c.help)
	}
	b.WriteString(commonHelp)
	return b.String()
}

// commonHelp closes every help text: what all commands share.
const commonHelp = `  Every command takes --url, --token, --json and --table. Credentials come from the
  flags, else EXPD_URL/EXPD_TOKEN, else 'expd login', else a local 'expd dev'
  (.expd/dev-credentials.json, or $EXPD_DEV_DATA_DIR). Exit codes: 0 ok,
  1 server/network failure, 2 usage, 3 credentials, 4 not found (results
  collecting), 5 input refused, 6 run failed, 7 import with rejected lines.
  'expd COMMAND SUBCOMMAND --help' lists a subcommand's flags.
`

// isHelp: the argument asks for help rather than naming a subcommand.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// Run runs one CLI command and returns the process exit code. Errors are
// printed as one line (a problem's detail), never a stack.
func Run(ctx context.Context, name string, args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(io.Stderr, "expd: unknown command %q\n", name)
		return ExitUsage
	}
	// Help for the command itself; a subcommand's --help reaches its flag set.
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintf(io.Stdout, "usage: expd %s\n  %s\n\n%s", c.usage, c.help, commonHelp)
		return ExitOK
	}
	e := &env{io: io, name: name, usage: c.usage}
	err := c.run(ctx, e, args)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	code := ExitCode(err)
	fmt.Fprintln(io.Stderr, "expd "+name+": "+err.Error())
	var p *ProblemError
	if errors.As(err, &p) {
		for _, f := range p.Errors {
			fmt.Fprintf(io.Stderr, "  %s: %s\n", f.Field, f.Reason)
		}
	}
	return code
}

// usageError is a mistake in how a command was called.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// exitError carries its own exit code (a failed run, rejected lines).
type exitError struct {
	code int
	msg  string
}

func (x exitError) Error() string { return x.msg }

// ExitCode maps an error of a command to the process exit code.
func ExitCode(err error) int {
	var u usageError
	var x exitError
	var p *ProblemError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &u):
		return ExitUsage
	case errors.As(err, &x):
		return x.code
	case errors.As(err, &p):
		switch {
		case p.Status == 401 || p.Status == 403:
			return ExitAuth
		case p.Status == 404:
			return ExitNotFound
		case p.Status >= 400 && p.Status < 500:
			return ExitRejected
		}
	}
	return ExitFailure
}
