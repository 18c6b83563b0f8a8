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
#
# `start-replicated` starts the documented replicated form instead
# (docs/scale.md, "Replication"): a standalone ZooKeeper (Debian's
# `zookeeper` package) and two servers as two replicas of one shard
# (cluster "expd_repl", internal_replication, macros {shard} and
# {replica}), and prints CLICKHOUSE_TEST_REPLICATED_URL,
# CLICKHOUSE_TEST_REPLICA2_URL, CLICKHOUSE_TEST_REPLICATED_CLUSTER and
# CLICKHOUSE_REPLICATED_DIR; `stop DIR` ends it too.
set -euo pipefail

server=$(command -v clickhouse-server || echo /usr/bin/clickhouse-server)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start [replicated] starts the two servers: two shards, or, replicated,
# two replicas of one shard beside a ZooKeeper.
start() {
  local mode=${1:-sharded}
  local dir
  dir=$(mktemp -d /tmp/expd-clickhouse.XXXXXX)
  local tcp=() http=() inter=()
  for i in 0 1; do tcp[$i]=$(free_port); http[$i]=$(free_port); inter[$i]=$(free_port); done
  local name=expd_test servers="" extra=""
  if [ "$mode" = replicated ]; then
    name=expd_repl
    start_zookeeper "$dir" || { stop "$dir"; exit 1; }
    servers="<shard><internal_replication>true</internal_replication>"
    for i in 0 1; do servers="$servers<replica><host>127.0.0.1</host><port>${tcp[$i]}</port></replica>"; done
    servers="$servers</shard>"
    extra="<zookeeper><node><host>127.0.0.1</host><port>$(cat "$dir/zk/port")</port></node></zookeeper>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>"
  else
    for i in 0 1; do
      servers="$servers<shard><replica><host>127.0.0.1</host><port>${tcp[$i]}</port></replica></shard>"
    done
  fi
  # Replicated: the users' profile reads and writes a shard's first live
  # replica (load_balancing in_order), so a read sees the writes before it
  # (docs/scale.md, "Replication").
  local users=/etc/clickhouse-server/users.xml
  if [ "$mode" = replicated ]; then
    sed 's|<load_balancing>random</load_balancing>|<load_balancing>in_order</load_balancing>|' "$users" >"$dir/users.xml"
    grep -q '<load_balancing>in_order' "$dir/users.xml" || { echo "no load_balancing to set in $users" >&2; stop "$dir"; exit 1; }
    users=$dir/users.xml
  fi
  for i in 0 1; do
    local d="$dir/s$i" macros=""
    [ "$mode" = replicated ] && macros="<macros><shard>01</shard><replica>r$i</replica></macros>"
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
  <users_config>$users</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <remote_servers><$name>$servers</$name></remote_servers>
  $extra
  $macros
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
  if [ "$mode" = replicated ]; then
    echo "export CLICKHOUSE_TEST_REPLICATED_URL=clickhouse://127.0.0.1:${tcp[0]}/default"
    echo "export CLICKHOUSE_TEST_REPLICA2_URL=clickhouse://127.0.0.1:${tcp[1]}/default"
    echo "export CLICKHOUSE_TEST_REPLICATED_CLUSTER=$name"
    echo "export CLICKHOUSE_REPLICATED_DIR=$dir"
    return
  fi
  echo "export CLICKHOUSE_TEST_URL=clickhouse://127.0.0.1:${tcp[0]}/default"
  echo "export CLICKHOUSE_TEST_SHARD2_URL=clickhouse://127.0.0.1:${tcp[1]}/default"
  echo "export CLICKHOUSE_TEST_CLUSTER=$name"
  echo "export CLICKHOUSE_CLUSTER_DIR=$dir"
}

# start_zookeeper DIR starts a standalone ZooKeeper (Debian's package) on
# a free port of 127.0.0.1, its admin server off, and waits for it.
start_zookeeper() {
  local z="$1/zk" port
  port=$(free_port)
  mkdir -p "$z/data"
  cat >"$z/zoo.cfg" <<CFG
tickTime=2000
dataDir=$z/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok
CFG
  echo "$port" >"$z/port"
  java -cp "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar" org.apache.zookeeper.server.ZooKeeperServerMain "$z/zoo.cfg" >"$z/out.log" 2>&1 &
  echo $! >"$z/pid"
  for _ in $(seq 1 60); do
    local reply
    reply=$({ exec 3<>/dev/tcp/127.0.0.1/"$port" && printf ruok >&3 && timeout 2 cat <&3; } 2>/dev/null) || true
    [ "$reply" = imok ] && return 0
    sleep 0.5
  done
  echo "zookeeper did not start; log:" >&2
  tail -n 20 "$z/out.log" >&2 || true
  return 1
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
  tail -n 20 "$d/log/server.err.log" "$d/log/stdout.log" >&2 || true
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
  for p in "$dir"/s*/pid "$dir"/zk/pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
  done
  for p in "$dir"/s*/pid "$dir"/zk/pid; do
    [ -f "$p" ] || continue
    for _ in $(seq 1 40); do kill -0 "$(cat "$p")" 2>/dev/null || break; sleep 0.25; done
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  start-replicated) start replicated ;;
  stop) stop "${2:?directory}" ;;
  stop-shard) stop_shard "${2:?directory}" "${3:?shard 0 or 1}" ;;
  start-shard) run_shard "${2:?directory}" "${3:?shard 0 or 1}"; wait_shard "$2" "$3" ;;
  *) echo "usage: $0 start | start-replicated | stop DIR | stop-shard DIR N | start-shard DIR N" >&2; exit 2 ;;
esac
