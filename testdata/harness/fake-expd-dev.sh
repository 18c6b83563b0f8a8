#!/bin/sh
# Stands in for `expd dev` in the tests of the client harnesses' start retry
# (sdk/go, sdk/python/tests/integration, sdk/js/test). State lives in
# $FAKE_EXPD_STATE: while its file fail-count holds a positive number, a start
# counts it down and exits 1 with a bind error; otherwise it writes
# dev-credentials.json into --data-dir, prints the banner and waits for SIGINT.
# Every start appends a line to $FAKE_EXPD_STATE/starts.
while [ "$#" -gt 0 ]; do [ "$1" = --data-dir ] && dir="$2"; shift; done
echo start >> "$FAKE_EXPD_STATE/starts"
left=$(cat "$FAKE_EXPD_STATE/fail-count")
if [ "$left" -gt 0 ]; then
  echo $((left - 1)) > "$FAKE_EXPD_STATE/fail-count"
  echo "listen tcp 127.0.0.1:25642: bind: address already in use" >&2
  exit 1
fi
mkdir -p "$dir"
echo '{"base_url": "http://127.0.0.1:4321", "publishable_key": "pk_fake", "identity_jwt": "jwt_fake"}' > "$dir/dev-credentials.json"
echo "expd dev is running"
echo "  API:         http://127.0.0.1:4321"
echo "  Temporal:    127.0.0.1:7233"
trap 'exit 0' INT
while :; do sleep 0.1; done
