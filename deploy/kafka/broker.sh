#!/usr/bin/env bash
# Local single-node Apache Kafka 4.x broker (KRaft: broker + controller in one
# JVM) for nuggetflow development and CI. No docker, no tarball download: the
# jars come from Maven Central through deploy/kafka/pom.xml.
#
# See deploy/kafka/README.md for details.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
POM="$SCRIPT_DIR/pom.xml"

usage() {
  cat <<EOF
usage: $(basename "$0") <command> [args]

Commands:
  install           fetch the Kafka jars into the cache (no-op when present)
  start             install if needed, format storage if needed, start the
                    broker in the background and wait until it accepts clients
  stop              stop the broker (SIGTERM, then SIGKILL after a timeout)
  restart           stop, then start
  status            print whether the broker runs (exit 0 running, 3 not)
  reset             stop the broker and wipe its data (topics, offsets)
  ready             exit 0 when the broker answers clients (a topic listing)
  tool CLASS [ARGS] run a Kafka CLI class on the broker's classpath, e.g.
                    tool org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
  env               print the effective settings

Environment (defaults in brackets):
  NUGGETFLOW_KAFKA_PORT             client (PLAINTEXT) port       [19092]
  NUGGETFLOW_KAFKA_CONTROLLER_PORT  KRaft controller port         [19093]
  NUGGETFLOW_KAFKA_HEAP             broker -Xms/-Xmx              [512m]
  NUGGETFLOW_KAFKA_PARTITIONS       num.partitions for new topics [4]
  NUGGETFLOW_KAFKA_START_TIMEOUT    seconds to wait for readiness [120]
  NUGGETFLOW_KAFKA_STOP_TIMEOUT     seconds before SIGKILL        [60]
  NUGGETFLOW_KAFKA_SASL_PORT        also a SASL_PLAINTEXT listener (SASL/PLAIN) on
                                    127.0.0.1:<port>, like the compose stack's [off]
  NUGGETFLOW_KAFKA_SASL_JAAS        its JAAS file (KafkaServer section with user_<name>=
                                    "<password>" entries; deploy/secrets/init.sh makes
                                    one); required with NUGGETFLOW_KAFKA_SASL_PORT
  NUGGETFLOW_KAFKA_NODE_ID, NUGGETFLOW_KAFKA_QUORUM_VOTERS, NUGGETFLOW_KAFKA_CLUSTER_ID
                                    cluster mode: node id [1], controller quorum
                                    [<id>@127.0.0.1:<controller port>], shared cluster id
  NUGGETFLOW_KAFKA_REPLICATION, NUGGETFLOW_KAFKA_MIN_ISR
                                    replication factor and min.insync.replicas of
                                    internal and auto-created topics [1, 1]
  NUGGETFLOW_KAFKA_WAIT             0: start returns once the process runs [1]
  NUGGETFLOW_VAR_DIR                runtime state root            [<repo>/var]
                                    data: \$NUGGETFLOW_VAR_DIR/kafka/data
                                    logs: \$NUGGETFLOW_VAR_DIR/kafka/logs
                                    pid:  \$NUGGETFLOW_VAR_DIR/kafka/kafka.pid
  NUGGETFLOW_CACHE_DIR              jar cache root   [\$HOME/.cache/nuggetflow]
                                    jars: \$NUGGETFLOW_CACHE_DIR/kafka-<version>/libs
  NUGGETFLOW_MAVEN_REPO_LOCAL       optional Maven local repository for install
  JAVA_HOME                         JDK to use (Java 17+); else 'java' on PATH
EOF
}

# ---------------------------------------------------------------- settings --
KAFKA_VERSION="$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' "$POM" | head -n1)"
[[ -n "$KAFKA_VERSION" ]] || { echo "broker.sh: cannot read kafka.version from $POM" >&2; exit 1; }

PORT="${NUGGETFLOW_KAFKA_PORT:-19092}"
CPORT="${NUGGETFLOW_KAFKA_CONTROLLER_PORT:-19093}"
HEAP="${NUGGETFLOW_KAFKA_HEAP:-512m}"
PARTITIONS="${NUGGETFLOW_KAFKA_PARTITIONS:-4}"
START_TIMEOUT="${NUGGETFLOW_KAFKA_START_TIMEOUT:-120}"
STOP_TIMEOUT="${NUGGETFLOW_KAFKA_STOP_TIMEOUT:-60}"
SASL_PORT="${NUGGETFLOW_KAFKA_SASL_PORT:-}"
# Cluster mode (deploy/kafka/cluster.sh sets these): this broker's id, the controller
# quorum, the replication of internal and new topics, a shared cluster id, and start
# without waiting (one broker of several cannot serve before the quorum forms).
NODE_ID="${NUGGETFLOW_KAFKA_NODE_ID:-1}"
VOTERS="${NUGGETFLOW_KAFKA_QUORUM_VOTERS:-$NODE_ID@127.0.0.1:$CPORT}"
REPLICATION="${NUGGETFLOW_KAFKA_REPLICATION:-1}"
MIN_ISR="${NUGGETFLOW_KAFKA_MIN_ISR:-1}"
CLUSTER_ID="${NUGGETFLOW_KAFKA_CLUSTER_ID:-}"
WAIT="${NUGGETFLOW_KAFKA_WAIT:-1}"
SASL_JAAS="${NUGGETFLOW_KAFKA_SASL_JAAS:-}"

VAR_DIR="${NUGGETFLOW_VAR_DIR:-$REPO_ROOT/var}"
mkdir -p "$VAR_DIR"
VAR_DIR="$(cd "$VAR_DIR" && pwd)"
KAFKA_VAR="$VAR_DIR/kafka"
DATA_DIR="$KAFKA_VAR/data"
LOG_DIR="$KAFKA_VAR/logs"
PID_FILE="$KAFKA_VAR/kafka.pid"
PROPS="$KAFKA_VAR/server.properties"
CLUSTER_ID_FILE="$KAFKA_VAR/cluster.id"
OUT_FILE="$LOG_DIR/kafka.out"

CACHE_DIR="${NUGGETFLOW_CACHE_DIR:-$HOME/.cache/nuggetflow}"
KAFKA_CACHE="$CACHE_DIR/kafka-$KAFKA_VERSION"
LIB_DIR="$KAFKA_CACHE/libs"
MARKER="$KAFKA_CACHE/.installed"

if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
  JAVA="$JAVA_HOME/bin/java"
else
  JAVA="java"
fi

log() { echo "[kafka] $*"; }
die() { echo "[kafka] ERROR: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/process.sh
. "$SCRIPT_DIR/../lib/process.sh"

# ----------------------------------------------------------------- install --
pom_hash() { sha256sum "$POM" | cut -d' ' -f1; }

is_installed() {
  [[ -f "$MARKER" && -d "$LIB_DIR" ]] && [[ "$(cat "$MARKER")" == "$(pom_hash)" ]]
}

cmd_install() {
  if is_installed; then
    [[ "${1:-}" == "--quiet" ]] && return 0
    log "Kafka $KAFKA_VERSION already installed in $LIB_DIR ($(find "$LIB_DIR" -name "*.jar" | wc -l) jars)"
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (apt-get install -y maven)"
  mkdir -p "$KAFKA_CACHE"
  local tmp="$KAFKA_CACHE/libs.tmp.$$"
  local mvn_log="$KAFKA_CACHE/install.log"
  rm -rf "$tmp"
  local -a mvn_args=(-B -ntp -f "$POM" "-Dkafka.libdir=$tmp" package)
  if [[ -n "${NUGGETFLOW_MAVEN_REPO_LOCAL:-}" ]]; then
    mvn_args=("-Dmaven.repo.local=$NUGGETFLOW_MAVEN_REPO_LOCAL" "${mvn_args[@]}")
  fi
  log "fetching Kafka $KAFKA_VERSION jars with Maven (log: $mvn_log)"
  local t0=$SECONDS
  if ! mvn "${mvn_args[@]}" >"$mvn_log" 2>&1; then
    tail -n 40 "$mvn_log" >&2
    rm -rf "$tmp"
    die "maven failed to fetch the Kafka jars"
  fi
  # Maven never needs a target/ for this POM; make sure none is left in the repo.
  rm -rf "$SCRIPT_DIR/target"
  ls "$tmp"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null 2>&1 || die "kafka_2.13 jar missing after maven run"
  rm -rf "$LIB_DIR"
  mv "$tmp" "$LIB_DIR"
  pom_hash >"$MARKER"
  log "installed $(find "$LIB_DIR" -name "*.jar" | wc -l) jars into $LIB_DIR in $((SECONDS - t0))s"
}

check_java() {
  command -v "$JAVA" >/dev/null 2>&1 || die "java not found (need Java 17+; set JAVA_HOME)"
  local spec
  spec="$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n1)"
  [[ -n "$spec" ]] || die "cannot determine the Java version of $JAVA"
  [[ "${spec%%.*}" -ge 17 ]] || die "Kafka $KAFKA_VERSION needs Java 17+, $JAVA is $spec (set JAVA_HOME)"
}

# Run a Kafka CLI class with the cached jars; logging goes to stderr at WARN.
run_class() {
  local cls="$1"; shift
  "$JAVA" -Xmx256m -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$SCRIPT_DIR/tools-log4j2.properties" \
    -cp "$LIB_DIR/*" "$cls" "$@"
}

# ------------------------------------------------------------------ helpers --
read_pid() {
  if [[ -f "$PID_FILE" ]]; then tr -dc '0-9' <"$PID_FILE"; fi
}

# True when $1 is alive and is *our* broker (guards against recycled pids).
is_our_broker() {
  local pid="$1"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  local cmd
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"kafka.Kafka $PROPS"* ]]
}

running_pid() {
  local pid
  pid="$(read_pid)"
  if is_our_broker "$pid"; then echo "$pid"; fi
}


write_config() {
  mkdir -p "$DATA_DIR" "$LOG_DIR"
  local listeners="PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT"
  local advertised="PLAINTEXT://127.0.0.1:$PORT"
  local protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
  local sasl="# no SASL listener (NUGGETFLOW_KAFKA_SASL_PORT)"
  if [[ -n "$SASL_PORT" ]]; then
    listeners+=",SASL://127.0.0.1:$SASL_PORT"
    advertised+=",SASL://127.0.0.1:$SASL_PORT"
    protocols+=",SASL:SASL_PLAINTEXT"
    sasl="sasl.enabled.mechanisms=PLAIN"
  fi
  cat >"$PROPS" <<EOF
# Generated by deploy/kafka/broker.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$VOTERS
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=$advertised
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
$sasl
log.dirs=$DATA_DIR
num.partitions=$PARTITIONS
default.replication.factor=$REPLICATION
min.insync.replicas=$MIN_ISR
offsets.topic.replication.factor=$REPLICATION
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$REPLICATION
transaction.state.log.min.isr=$MIN_ISR
share.coordinator.state.topic.replication.factor=$REPLICATION
share.coordinator.state.topic.min.isr=$MIN_ISR
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
num.recovery.threads.per.data.dir=1
log.retention.hours=168
EOF
  cat >"$KAFKA_VAR/admin.properties" <<EOF
request.timeout.ms=5000
default.api.timeout.ms=10000
EOF
}

format_if_needed() {
  if [[ -f "$DATA_DIR/meta.properties" ]]; then
    return 0
  fi
  local cid
  if [[ -n "$CLUSTER_ID" ]]; then
    cid="$CLUSTER_ID"
  elif [[ -s "$CLUSTER_ID_FILE" ]]; then
    cid="$(cat "$CLUSTER_ID_FILE")"
  else
    cid="$(run_class kafka.tools.StorageTool random-uuid | tail -n1)"
    [[ -n "$cid" ]] || die "StorageTool random-uuid printed nothing"
    echo "$cid" >"$CLUSTER_ID_FILE"
  fi
  log "formatting KRaft storage in $DATA_DIR (cluster id $cid)"
  run_class kafka.tools.StorageTool format -t "$cid" -c "$PROPS" --ignore-formatted \
    >"$LOG_DIR/format.log" 2>&1 || { cat "$LOG_DIR/format.log" >&2; die "storage format failed"; }
}

show_logs() {
  echo "----- tail of $OUT_FILE -----" >&2
  tail -n 30 "$OUT_FILE" >&2 2>/dev/null || true
  echo "----- tail of $LOG_DIR/server.log -----" >&2
  tail -n 40 "$LOG_DIR/server.log" >&2 2>/dev/null || true
}

broker_ready() {
  timeout 30 "$JAVA" -Xmx128m -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$SCRIPT_DIR/tools-log4j2.properties" \
    -cp "$LIB_DIR/*" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "127.0.0.1:$PORT" --command-config "$KAFKA_VAR/admin.properties" \
    --list >/dev/null 2>>"$LOG_DIR/readiness.log"
}

# ----------------------------------------------------------------- commands --
cmd_start() {
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    log "already running (pid $pid, bootstrap 127.0.0.1:$PORT)"
    return 0
  fi
  [[ "$HEAP" =~ ^[0-9]+[kKmMgG]?$ ]] || die "NUGGETFLOW_KAFKA_HEAP must look like 512m or 1g, got '$HEAP'"
  local jaas=()
  if [[ -n "$SASL_PORT" ]]; then
    [[ -r "$SASL_JAAS" ]] || die "NUGGETFLOW_KAFKA_SASL_PORT needs NUGGETFLOW_KAFKA_SASL_JAAS (a readable JAAS file)"
    jaas=("-Djava.security.auth.login.config=$(cd "$(dirname "$SASL_JAAS")" && pwd)/$(basename "$SASL_JAAS")")
  fi
  cmd_install
  check_java
  for p in "$PORT" "$CPORT" $SASL_PORT; do
    port_open "$p" && die "port $p on 127.0.0.1 is already in use by another process"
  done
  write_config
  format_if_needed
  rm -f "$PID_FILE" "$LOG_DIR/readiness.log"
  echo "===== broker.sh start $(date -u +%Y-%m-%dT%H:%M:%SZ) =====" >>"$OUT_FILE"

  log "starting Kafka $KAFKA_VERSION on 127.0.0.1:$PORT (controller $CPORT, heap $HEAP${SASL_PORT:+, SASL/PLAIN on $SASL_PORT})"
  local t0=$SECONDS
  (
    cd "$KAFKA_VAR"
    exec setsid nohup "$JAVA" "-Xms$HEAP" "-Xmx$HEAP" -server \
      -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
      -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
      "-Dkafka.logs.dir=$LOG_DIR" ${jaas[@]+"${jaas[@]}"} \
      "-Dlog4j2.configurationFile=$SCRIPT_DIR/log4j2.properties" \
      -cp "$LIB_DIR/*" kafka.Kafka "$PROPS"
  ) >>"$OUT_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  if [[ "$WAIT" == 0 ]]; then
    log "launched (pid $pid, node $NODE_ID, bootstrap 127.0.0.1:$PORT); not waiting (NUGGETFLOW_KAFKA_WAIT=0)"
    return 0
  fi

  while true; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      show_logs
      die "broker process $pid exited during startup"
    fi
    if port_open "$PORT" && broker_ready; then
      break
    fi
    if (( SECONDS - t0 >= START_TIMEOUT )); then
      show_logs
      log "not ready after ${START_TIMEOUT}s; stopping it"
      cmd_stop >&2 || true
      die "broker did not become ready within ${START_TIMEOUT}s"
    fi
    sleep 1
  done
  log "ready in $((SECONDS - t0))s (pid $pid, bootstrap 127.0.0.1:$PORT, logs $LOG_DIR)"
}

cmd_stop() { stop_process "$(running_pid)" "$STOP_TIMEOUT" "$PID_FILE"; }

cmd_status() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    log "not running"
    return 3
  fi
  if port_open "$PORT"; then
    log "running (pid $pid, bootstrap 127.0.0.1:$PORT, controller 127.0.0.1:$CPORT, data $DATA_DIR)"
  else
    log "process $pid alive but port $PORT not open (starting or stopping)"
  fi
}

cmd_reset() {
  cmd_stop
  log "wiping $DATA_DIR and the cluster id"
  rm -rf "$DATA_DIR" "$CLUSTER_ID_FILE"
}

cmd_env() {
  cat <<EOF
KAFKA_VERSION=$KAFKA_VERSION
BOOTSTRAP=127.0.0.1:$PORT
SASL_BOOTSTRAP=${SASL_PORT:+127.0.0.1:$SASL_PORT}
CONTROLLER=127.0.0.1:$CPORT
HEAP=$HEAP
VAR_DIR=$VAR_DIR
DATA_DIR=$DATA_DIR
LOG_DIR=$LOG_DIR
PID_FILE=$PID_FILE
LIB_DIR=$LIB_DIR
JAVA=$JAVA
EOF
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  env) cmd_env ;;
  ready) port_open "$PORT" && broker_ready ;;
  tool)
    shift
    [[ $# -ge 1 ]] || { usage >&2; exit 2; }
    cmd_install --quiet >&2
    check_java
    run_class "$@"
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
