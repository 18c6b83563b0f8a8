#!/usr/bin/env bash
# The quick start (docs/quickstart.md) end to end, as CI runs it: every
# command of the doc's code blocks is a line of this script, in the same
# order (test/doc.test.js checks), plus what a script needs and a reader
# does not: isolation from the caller's environment, process cleanup, and
# the check that the verdict says what the fake models' deterministic
# behaviour implies (expect-verdict.js). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

# expd dev on its embedded defaults (SQLite, embedded Temporal), whatever
# the caller's environment points at (CI exports PostgreSQL and ClickHouse
# for the Go suite), and the CLI on this expd dev's credentials only.
unset DATABASE_URL CLICKHOUSE_URL CLICKHOUSE_CLUSTER TEMPORAL_ADDRESS EXPD_URL EXPD_TOKEN EXPD_SECRET_KEY
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOFLAGS="${GOFLAGS:--buildvcs=false}"

pids=()
cleanup() {
  status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ] && [ -n "${QS:-}" ]; then
    for log in "$QS"/*.log; do echo "--- $log (last 40 lines)" >&2; tail -40 "$log" >&2 || true; done
  fi
  [ -n "${QS:-}" ] && rm -rf "$QS"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# 1. Build expd and the fake model server.
export QS=$(mktemp -d)
export XDG_CONFIG_HOME=$QS/config
go build -o $QS/bin/ ./cmd/expd ./examples/fakellm
export PATH=$QS/bin:$PATH

# 2. The fake OpenAI-compatible models.
fakellm --addr 127.0.0.1:0 --url-file $QS/fakellm.url > $QS/fakellm.log 2>&1 &
pids+=($!)
timeout 60 sh -c "until [ -s $QS/fakellm.url ]; do sleep 0.2; done"
export OPENAI_BASE_URL=$(cat $QS/fakellm.url) OPENAI_API_KEY=fake

# 3. expd dev.
expd dev --data-dir $QS/data --addr 127.0.0.1:0 --temporal-port 0 --temporal-http-port 0 --ui-port -1 > $QS/expd.log 2>&1 &
pids+=($!)
timeout 120 sh -c "until [ -s $QS/data/dev-credentials.json ]; do sleep 0.5; done"
export EXPD_DEV_DATA_DIR=$QS/data
node -p "'Dashboard: ' + require('$QS/data/dev-credentials.json').base_url"

# 4. The experiment.
expd experiments create -f examples/quickstart/quickstart.yaml
expd experiments get quickstart

# 5. The app and its simulated users.
(cd examples/quickstart && npm ci --no-audit --no-fund && node app.js)

# 6. Run now.
expd runs start quickstart --wait

# 7. The verdict.
expd results quickstart
expd results quickstart --json > $QS/results.json
node examples/quickstart/expect-verdict.js $QS/results.json
