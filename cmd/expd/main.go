// Command expd is the experimentation service: one binary with the
// subcommands dev (everything in one process on embedded defaults), api,
// worker and migrate.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/expd/expd/cli"
	"github.com/expd/expd/telemetry"
)

const usage = `expd: A/B experimentation service for applications that call language models.

Usage:
  expd dev     [--addr 127.0.0.1:8080] [--data-dir .expd] [--temporal-port 7233]
               [--temporal-http-port 7243] [--ui-port 8233] [--plan enterprise]
               [--ingest-spool-dir DIR] [--ingest-spool-linger 2s]
               Everything in one process: embedded Temporal server and UI,
               worker, API, SQLite (PostgreSQL when DATABASE_URL is set).
               Port 0 picks a free port. Writes <data-dir>/dev-credentials.json.
               The dev org is on the free plan unless --plan sets another.
  expd api     [--addr :8080] [--metrics-addr ADDR] [--ingest-spool-dir DIR]
               [--ingest-spool-linger 2s]
               HTTP API (production shape: PostgreSQL + Temporal)
  expd worker  [--metrics-addr ADDR]
               Temporal worker: results pipeline, key rotation, webhooks
  expd migrate                  apply pending database migrations, then exit
  expd healthcheck URL          exit 0 when URL answers 200 (container health checks)

Environment:
  DATABASE_URL            postgres://... selects PostgreSQL; unset: SQLite in the data dir (dev)
  TEMPORAL_ADDRESS        host:port of a Temporal frontend; unset in dev: embedded server
  TEMPORAL_NAMESPACE      Temporal namespace (default "default")
  TEMPORAL_UI_URL         Temporal UI base URL; the dashboard links runs to their workflow there (unset: no links; dev: the embedded UI)
  TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_*, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE
                          the Temporal SDK's environment configuration (Temporal Cloud, TLS)
  EXPD_TASK_QUEUE         task queue of expd's workflows (default "expd")
  CLERK_JWT_KEY           PEM public key verifying identity-provider session JWTs
  CLERK_JWKS_URL          or: JWKS URL of the identity provider (refreshed hourly and on a new kid)
  CLERK_ISSUER            required by api: session tokens must carry this iss (the Clerk Frontend API URL)
  CLERK_AUDIENCE          when set, session tokens' aud must contain it
  CLERK_WEBHOOK_SECRET    whsec_... secret of the identity webhook
  STRIPE_SECRET_KEY       Stripe API key; unset: billing_configured=false
  STRIPE_WEBHOOK_SECRET   whsec_... secret of the payment webhook
  STRIPE_PRICE_PRO        Stripe price id of the pro plan
  STRIPE_PRICE_BUSINESS   Stripe price id of the business plan
  STRIPE_API_BASE         Stripe API base URL (tests point it at stripe-mock)
  EXPD_DASHBOARD_ORIGINS  comma-separated dashboard origins: CORS on dashboard routes, the
                          allowed azp of session tokens (then required), where checkout/portal may return to
  EXPD_RATE_LIMITS        per-plan overrides of /v1/assign and /v1/events rates,
                          e.g. "free=20:40,enterprise=off" (rate per second:burst)
  EXPD_SDK_CACHE_MAX_AGE  how long the SDK cache serves without revalidating (default 1s)
  EXPD_DEV_PLAN           expd dev: the dev org's plan at start (same as --plan)
  EXPD_LOG_LEVEL          debug, info (default), warn, error
  EXPD_LOG_SLOW_REQUEST   /v1/config, /v1/assign, /v1/events log only errors and requests
                          slower than this (default 500ms)
  EXPD_LOG_SAMPLE_HOT     and one in N of their other requests (default 0: none)
  EXPD_SECRETS_KEY        32 random bytes in base64 (openssl rand -base64 32): encrypts LLM
                          judges' api keys and signing secrets at rest (unset: judges,
                          webhook endpoints and business-event secrets are refused;
                          expd dev generates one in its data dir)
  EXPD_SECRETS_KEY_PREVIOUS  the key before a rotation: still decrypts, never encrypts;
                          expd migrate seals everything again under the new key
  INGEST_SPOOL_DIR        api and dev with CLICKHOUSE_URL: acknowledge POST /v1/events once in a local,
                          fsync'd log in this directory (one per instance) and ship to ClickHouse
                          in large inserts; unset: each group inserts into ClickHouse before its ack
  INGEST_SPOOL_MAX_BYTES  unshipped bytes the spool holds before /v1/events answers 503 (default 1 GiB)
  INGEST_SPOOL_LINGER     how long the spool's oldest entry waits for more before a small shipment
                          to ClickHouse goes (a Go duration, default 2s)
  EXPD_METRICS_ADDR       Prometheus /metrics and /readyz listener of api and worker
                          (default off; dev: a free local port, printed)
  OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT, _HEADERS, ...)
                          send OpenTelemetry traces over OTLP/gRPC; unset: no tracing
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	if cmd == "-h" || cmd == "--help" || cmd == "help" {
		fmt.Print(usage + "\nCommands for people and scripts (talk to a running server):\n" + cli.Usage())
		return
	}
	if slices.Contains(cli.Commands(), cmd) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Run(ctx, cmd, args, cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			StdinTerminal: term.IsTerminal(int(os.Stdin.Fd())), StdoutTerminal: term.IsTerminal(int(os.Stdout.Fd())),
			StderrTerminal: term.IsTerminal(int(os.Stderr.Fd()))})
		stop()
		os.Exit(code)
	}
	run, ok := commands[cmd]
	if !ok {
		fmt.Fprintf(os.Stderr, "expd: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	cfg := configFromEnv()
	slog.SetDefault(newLogger(cfg.LogLevel))
	if err := cfg.validate(); err != nil {
		slog.Error("bad configuration", "error", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := telemetry.SetupTracing(ctx, "expd-"+cmd)
	if err != nil {
		slog.Error("bad tracing configuration", "error", err)
		os.Exit(2)
	}
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = stopTracing(flush)
	}()
	if err := run(ctx, cfg, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		slog.Error("expd "+cmd+" failed", "error", err)
		stop()
		os.Exit(1)

	}
}

// commands are the subcommands; "dev" is added by dev_cmd.go (or its
// noembedded stand-in).
var commands = map[string]func(context.Context, Config, []string) error{
	"api":         runAPI,
	"worker":      runWorker,
	"migrate":     runMigrate,
	"healthcheck": runHealthcheck,
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("expd "+name, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	return fs
}
