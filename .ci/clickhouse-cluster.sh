#!/usr/bin/env bash
# Starts a two-shard ClickHouse cluster for the tests: two clickhouse-server
# processes on free ports, each with a generated config whose remote_servers
# names both (cluster "expd_test", no ZooKeeper). Prints the environment the
# tests read (CLICKHOUSE_TEST_URL, CLICKHOUSE_TEST_CLUSTER) and the pids, as
# shell assignments; `stop DIR` ends the servers it started. `stop-shard DIR
# N` and `start-shard DIR N` (N = 0 or 1) stop one server and start it
# again on its data, for the tests of a shard that goes away.
#
#   eval "$(.ci/clickhouse-cluster.sh start)"   # sets CLICKHOUSE_* and CLICKHOUSE_CLUSTER_DIR
#   .ci/clickhouse-cluster.sh stop "$CLICKHOUSE_CLUSTER_DIR"
set -euo pipefail

server=$(command -v clickhouse-server || echo /usr/bin/clickhouse-server)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local dir
  dir=$(mktemp -d /tmp/expd-clickhouse.XXXXXX)
  local tcp=() http=() inter=()
  for i in 0 1; do tcp[$i]=$(free_port); http[$i]=$(free_port); inter[$i]=$(free_port); done
  local shards=""
  for i in 0 1; do
    shards="$shards<shard><replica><host>127.0.0.1</host><port>${tcp[$i]}</port></replica></shard>"
  done
  for i in 0 1; do
    local d="$dir/s$i"
    mkdir -p "$d/data" "$d/tmp" "$d/log" "$d/user_files"
    cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/log/server.log</log><errorlog>$d/log/server.err.log</errorlog><size>10M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>${tcp[$i]}</tcp_port>
  <http_port>${http[$i]}</http_port>
  <interserver_http_port>${inter[$i]}</interserver_http_port>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <remote_servers><expd_test>$shards</expd_test></remote_servers>
</yandex>
XML
    echo "${tcp[$i]}" >"$d/port"
    run_shard "$dir" "$i"
  done
  for i in 0 1; do
    if ! wait_shard "$dir" "$i"; then
      stop "$dir"
      exit 1
    fi
  done
  echo "export CLICKHOUSE_TEST_URL=clickhouse://127.0.0.1:${tcp[0]}/default"
  echo "export CLICKHOUSE_TEST_SHARD2_URL=clickhouse://127.0.0.1:${tcp[1]}/default"
  echo "export CLICKHOUSE_TEST_CLUSTER=expd_test"
  echo "export CLICKHOUSE_CLUSTER_DIR=$dir"
}

# run_shard DIR N starts server N of the cluster in DIR in the background.
run_shard() {
  local d="$1/s$2"
  "$server" --config-file="$d/config.xml" >>"$d/log/stdout.log" 2>&1 &
  echo $! >"$d/pid"
}

# wait_shard DIR N waits until server N answers (30 s at most).
wait_shard() {
  local d="$1/s$2"
  for _ in $(seq 1 60); do
    if clickhouse-client --port "$(cat "$d/port")" -q 'SELECT 1' >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "clickhouse shard $2 did not start; log:" >&2
  tail -20 "$d/log/server.err.log" "$d/log/stdout.log" >&2 || true
  return 1
}

# stop_shard DIR N ends server N and waits until it is gone.
stop_shard() {
  local p="$1/s$2/pid"
  [ -f "$p" ] || return 0
  kill "$(cat "$p")" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$(cat "$p")" 2>/dev/null || break; sleep 0.25; done
}

stop() {
  local dir=$1
  for p in "$dir"/s*/pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
  done
  for p in "$dir"/s*/pid; do
    for _ in $(seq 1 40); do kill -0 "$(cat "$p")" 2>/dev/null || break; sleep 0.25; done
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:?directory}" ;;
  stop-shard) stop_shard "${2:?directory}" "${3:?shard 0 or 1}" ;;
  start-shard) run_shard "${2:?directory}" "${3:?shard 0 or 1}"; wait_shard "$2" "$3" ;;
  *) echo "usage: $0 start | stop DIR | stop-shard DIR N | start-shard DIR N" >&2; exit 2 ;;
esac
