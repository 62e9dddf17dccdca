#!/usr/bin/env bash
# A 3-broker Kafka KRaft cluster on 127.0.0.1 (each broker also a controller), next to the
# single broker of broker.sh: its own ports and data directories, the same cached jars.
# Internal topics are replicated 3 times with min.insync.replicas 2, so one broker may be
# down without losing an acknowledged record.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
BROKER="$SCRIPT_DIR/broker.sh"

NODES="${NUGGETFLOW_KAFKA_CLUSTER_NODES:-3}"
CLIENT_BASE="${NUGGETFLOW_KAFKA_CLUSTER_PORT_BASE:-19190}"        # broker i: base + i
CONTROLLER_BASE="${NUGGETFLOW_KAFKA_CLUSTER_CONTROLLER_BASE:-19290}"
START_TIMEOUT="${NUGGETFLOW_KAFKA_START_TIMEOUT:-180}"
VAR_ROOT="${NUGGETFLOW_VAR_DIR:-$REPO_ROOT/var}/kafka-cluster"

usage() {
  cat <<EOF
usage: $(basename "$0") <command> [node]

Commands:
  start             start every broker (formatting storage once, with one cluster id) and
                    wait until each answers clients
  stop [N]          stop every broker, or broker N (SIGTERM, then SIGKILL)
  kill N            kill -9 broker N (fault tests)
  start-node N      start broker N again and wait until it answers
  status            each broker's state
  bootstrap         print the bootstrap list (host:port,...)
  reset             stop every broker and wipe the cluster's data

Environment (defaults in brackets):
  NUGGETFLOW_KAFKA_CLUSTER_NODES          brokers                       [$NODES]
  NUGGETFLOW_KAFKA_CLUSTER_PORT_BASE      client port of broker i: base+i [$CLIENT_BASE]
  NUGGETFLOW_KAFKA_CLUSTER_CONTROLLER_BASE controller port: base+i      [$CONTROLLER_BASE]
  NUGGETFLOW_KAFKA_HEAP                   heap per broker               [512m]
  NUGGETFLOW_VAR_DIR                      state root; the cluster lives in <root>/kafka-cluster
EOF
}

log() { echo "[kafka-cluster] $*"; }
die() { echo "[kafka-cluster] ERROR: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/process.sh
. "$SCRIPT_DIR/../lib/process.sh"

voters() {
  local i out=""
  for (( i = 1; i <= NODES; i++ )); do
    out+="${out:+,}$i@127.0.0.1:$(( CONTROLLER_BASE + i ))"
  done
  echo "$out"
}

bootstrap() {
  local i out=""
  for (( i = 1; i <= NODES; i++ )); do out+="${out:+,}127.0.0.1:$(( CLIENT_BASE + i ))"; done
  echo "$out"
}

cluster_id() {
  local file="$VAR_ROOT/cluster.id"
  mkdir -p "$VAR_ROOT"
  if [[ ! -s "$file" ]]; then
    "$BROKER" tool kafka.tools.StorageTool random-uuid | tail -n1 >"$file"
  fi
  cat "$file"
}

# node N COMMAND: run broker.sh for broker N of the cluster
node() {
  local n="$1"; shift
  [[ "$n" =~ ^[0-9]+$ ]] && (( n >= 1 && n <= NODES )) || die "no broker '$n' (1..$NODES)"
  local rf=$(( NODES < 3 ? NODES : 3 ))
  NUGGETFLOW_VAR_DIR="$VAR_ROOT/node$n" \
  NUGGETFLOW_KAFKA_PORT=$(( CLIENT_BASE + n )) \
  NUGGETFLOW_KAFKA_CONTROLLER_PORT=$(( CONTROLLER_BASE + n )) \
  NUGGETFLOW_KAFKA_NODE_ID="$n" \
  NUGGETFLOW_KAFKA_QUORUM_VOTERS="$(voters)" \
  NUGGETFLOW_KAFKA_REPLICATION="$rf" \
  NUGGETFLOW_KAFKA_MIN_ISR=$(( rf > 1 ? rf - 1 : 1 )) \
  NUGGETFLOW_KAFKA_CLUSTER_ID="$(cluster_id)" \
    "$BROKER" "$@"
}

wait_ready() {
  local n t0=$SECONDS
  for n in "$@"; do
    until node "$n" ready 2>/dev/null; do
      (( SECONDS - t0 < START_TIMEOUT )) || die "broker $n not ready after ${START_TIMEOUT}s (logs: $VAR_ROOT/node$n/kafka/logs)"
      sleep 1
    done
    log "broker $n ready at 127.0.0.1:$(( CLIENT_BASE + n ))"
  done
}

cmd_start() {
  "$BROKER" install
  local n all=()
  for (( n = 1; n <= NODES; n++ )); do
    NUGGETFLOW_KAFKA_WAIT=0 node "$n" start
    all+=("$n")
  done
  wait_ready "${all[@]}"
  log "cluster up: $(bootstrap)"
}

cmd_stop() {
  if [[ -n "${1:-}" ]]; then node "$1" stop; return; fi
  # all at once: stopped one by one, the last broker waits for a quorum that is gone
  local n
  for (( n = NODES; n >= 1; n-- )); do node "$n" stop & done
  wait
}

cmd_kill() { kill_9 "$VAR_ROOT/node${1:?broker number}/kafka/kafka.pid" "broker $1"; }

case "${1:-}" in
  start) cmd_start ;;
  stop) shift; cmd_stop "${1:-}" ;;
  kill) shift; cmd_kill "${1:-}" ;;
  start-node) shift; NUGGETFLOW_KAFKA_WAIT=0 node "${1:?broker number}" start; wait_ready "$1" ;;
  status) for (( n = 1; n <= NODES; n++ )); do node "$n" status || true; done ;;
  bootstrap) bootstrap ;;
  reset) cmd_stop; rm -rf "$VAR_ROOT"; log "wiped $VAR_ROOT" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
