#!/usr/bin/env bash
# A 3-node OpenSearch cluster on 127.0.0.1 (every node cluster-manager eligible and a data
# node), next to the single node of node.sh: its own ports and data directories, the same
# cached jars. New indices get one replica, so the cluster keeps every shard when a node dies.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
NODE="$SCRIPT_DIR/node.sh"

NODES="${NUGGETFLOW_OPENSEARCH_CLUSTER_NODES:-3}"
HTTP_BASE="${NUGGETFLOW_OPENSEARCH_CLUSTER_PORT_BASE:-19200}"          # node i: base + i
TRANSPORT_BASE="${NUGGETFLOW_OPENSEARCH_CLUSTER_TRANSPORT_BASE:-19300}"
HEAP="${NUGGETFLOW_OPENSEARCH_CLUSTER_HEAP:-512m}"
START_TIMEOUT="${NUGGETFLOW_OPENSEARCH_START_TIMEOUT:-240}"
VAR_ROOT="${NUGGETFLOW_VAR_DIR:-$REPO_ROOT/var}/opensearch-cluster"

usage() {
  cat <<EOF
usage: $(basename "$0") <command> [node]

Commands:
  start             start every node and wait until the cluster has them all and is green
  stop [N]          stop every node, or node N
  kill N            kill -9 node N (fault tests)
  start-node N      start node N again and wait until the cluster has every node
  status            the cluster's health as node 1 (or the first that answers) sees it
  urls              print the nodes' HTTP URLs (comma-separated)
  reset             stop every node and wipe the cluster's data

Environment (defaults in brackets):
  NUGGETFLOW_OPENSEARCH_CLUSTER_NODES           nodes                      [$NODES]
  NUGGETFLOW_OPENSEARCH_CLUSTER_PORT_BASE       HTTP port of node i: base+i [$HTTP_BASE]
  NUGGETFLOW_OPENSEARCH_CLUSTER_TRANSPORT_BASE  transport port: base+i      [$TRANSPORT_BASE]
  NUGGETFLOW_OPENSEARCH_CLUSTER_HEAP            heap per node               [$HEAP]
  NUGGETFLOW_VAR_DIR                            state root; the cluster lives in <root>/opensearch-cluster
EOF
}

log() { echo "[opensearch-cluster] $*"; }
die() { echo "[opensearch-cluster] ERROR: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/process.sh
. "$SCRIPT_DIR/../lib/process.sh"

list() {  # list PREFIX BASE: PREFIX(base+1),PREFIX(base+2),...
  local i out=""
  for (( i = 1; i <= NODES; i++ )); do out+="${out:+,}$1$(( $2 + i ))"; done
  echo "$out"
}

names() {
  local i out=""
  for (( i = 1; i <= NODES; i++ )); do out+="${out:+,}os-node-$i"; done
  echo "$out"
}

node() {
  local n="$1"; shift
  [[ "$n" =~ ^[0-9]+$ ]] && (( n >= 1 && n <= NODES )) || die "no node '$n' (1..$NODES)"
  NUGGETFLOW_VAR_DIR="$VAR_ROOT/node$n" \
  NUGGETFLOW_OPENSEARCH_PORT=$(( HTTP_BASE + n )) \
  NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT=$(( TRANSPORT_BASE + n )) \
  NUGGETFLOW_OPENSEARCH_HEAP="$HEAP" \
  NUGGETFLOW_OPENSEARCH_CLUSTER_NAME=nuggetflow-cluster \
  NUGGETFLOW_OPENSEARCH_NODE_NAME="os-node-$n" \
  NUGGETFLOW_OPENSEARCH_SEED_HOSTS="$(list 127.0.0.1: "$TRANSPORT_BASE")" \
  NUGGETFLOW_OPENSEARCH_INITIAL_MANAGERS="$(names)" \
  NUGGETFLOW_OPENSEARCH_DEFAULT_REPLICAS="" \
  NUGGETFLOW_OPENSEARCH_WAIT=0 \
    "$NODE" "$@"
}

# health ARGS: the cluster health as the first node that answers reports it
health() {
  local i
  for (( i = 1; i <= NODES; i++ )); do
    curl -sf --max-time 10 "http://127.0.0.1:$(( HTTP_BASE + i ))/_cluster/health?$1" && return 0
  done
  return 1
}

wait_for() {  # wait_for QUERY WHAT
  local t0=$SECONDS
  until health "$1" >/dev/null 2>&1 && [[ "$(health "$1" | sed -n 's/.*"timed_out":\([a-z]*\).*/\1/p')" == false ]]; do
    (( SECONDS - t0 < START_TIMEOUT )) || die "no $2 after ${START_TIMEOUT}s (logs: $VAR_ROOT/node*/opensearch/logs)"
    sleep 2
  done
}

cmd_start() {
  "$NODE" install >/dev/null
  local n
  for (( n = 1; n <= NODES; n++ )); do node "$n" start; done
  wait_for "wait_for_nodes=$NODES&wait_for_status=green&timeout=5s" "green cluster of $NODES nodes"
  # new indices: one replica each (a copy of every shard on another node)
  curl -sf --max-time 10 -XPUT "http://127.0.0.1:$(( HTTP_BASE + 1 ))/_cluster/settings" \
    -H 'Content-Type: application/json' \
    -d '{"persistent":{"cluster.default_number_of_replicas":1}}' >/dev/null
  log "cluster up: $(list http://127.0.0.1: "$HTTP_BASE")"
}

cmd_stop() {
  if [[ -n "${1:-}" ]]; then node "$1" stop; return; fi
  local n
  for (( n = NODES; n >= 1; n-- )); do node "$n" stop; done
}

cmd_kill() { kill_9 "$VAR_ROOT/node${1:?node number}/opensearch/opensearch.pid" "node $1"; }

case "${1:-}" in
  start) cmd_start ;;
  stop) shift; cmd_stop "${1:-}" ;;
  kill) shift; cmd_kill "${1:-}" ;;
  start-node) shift; node "${1:?node number}" start
              wait_for "wait_for_nodes=$NODES&timeout=5s" "cluster of $NODES nodes"
              log "node $1 back in the cluster" ;;
  status) health "pretty" || { log "no node answers"; exit 3; } ;;
  urls) list http://127.0.0.1: "$HTTP_BASE" ;;
  reset) cmd_stop; rm -rf "$VAR_ROOT"; log "wiped $VAR_ROOT" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
