#!/usr/bin/env bash
# Local Prometheus server for nuggetflow development and CI, run as a plain
# background process (no docker, no systemd). The binary comes from Debian's
# `prometheus` package. See deploy/prometheus/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"

usage() {
  cat <<EOF
usage: $(basename "$0") <command> [args]

Commands:
  install         apt-get install prometheus (only if prometheus/promtool are
                  missing); never leaves the packaged service running
  start [CONFIG]  install if needed, check CONFIG, start Prometheus in the
                  background and wait until /-/ready answers
  stop            stop it (SIGTERM, then SIGKILL after a timeout)
  restart [CONFIG]
  status          print whether it runs (exit 0 running, 3 not)
  reload          ask the running server to re-read its config (POST /-/reload)
  check CONFIG    promtool check config CONFIG
  targets JOB ADDR...
                  write deploy/prometheus/targets/JOB.json (JOB: query or worker)
                  with these host:port addresses; a running server picks it up
  reset           stop and wipe the TSDB data
  env             print the effective settings

Config file for start (first that applies):
  1. the CONFIG argument
  2. \$NUGGETFLOW_PROMETHEUS_CONFIG
  3. deploy/prometheus/prometheus.yml (when it exists)

Environment (defaults in brackets):
  NUGGETFLOW_PROMETHEUS_PORT           listen port on 127.0.0.1     [19090]
  NUGGETFLOW_PROMETHEUS_CONFIG         config file (see above)
  NUGGETFLOW_PROMETHEUS_TARGETS        folder the targets command writes
                                       [deploy/prometheus/targets]
  NUGGETFLOW_PROMETHEUS_RETENTION      --storage.tsdb.retention.time [7d]
  NUGGETFLOW_PROMETHEUS_START_TIMEOUT  seconds to wait for /-/ready  [60]
  NUGGETFLOW_PROMETHEUS_STOP_TIMEOUT   seconds before SIGKILL        [30]
  NUGGETFLOW_VAR_DIR                   runtime state root           [<repo>/var]
                                       data: \$NUGGETFLOW_VAR_DIR/prometheus/data
                                       log:  \$NUGGETFLOW_VAR_DIR/prometheus/prometheus.log
                                       pid:  \$NUGGETFLOW_VAR_DIR/prometheus/prometheus.pid
EOF
}

PORT="${NUGGETFLOW_PROMETHEUS_PORT:-19090}"
RETENTION="${NUGGETFLOW_PROMETHEUS_RETENTION:-7d}"
START_TIMEOUT="${NUGGETFLOW_PROMETHEUS_START_TIMEOUT:-60}"
STOP_TIMEOUT="${NUGGETFLOW_PROMETHEUS_STOP_TIMEOUT:-30}"
DEFAULT_CONFIG="$SCRIPT_DIR/prometheus.yml"

VAR_DIR="${NUGGETFLOW_VAR_DIR:-$REPO_ROOT/var}"
mkdir -p "$VAR_DIR"
VAR_DIR="$(cd "$VAR_DIR" && pwd)"
PROM_VAR="$VAR_DIR/prometheus"
DATA_DIR="$PROM_VAR/data"
LOG_FILE="$PROM_VAR/prometheus.log"
PID_FILE="$PROM_VAR/prometheus.pid"
BASE_URL="http://127.0.0.1:$PORT"

log() { echo "[prometheus] $*"; }
die() { echo "[prometheus] ERROR: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/process.sh
. "$SCRIPT_DIR/../lib/process.sh"

# ----------------------------------------------------------------- install --
have_binaries() { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; }

# The Debian package's postinst tries to start (and enable) its own service on
# port 9090. This project never uses that service: stop it if it came up.
stop_packaged_service() {
  if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
    systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  elif [[ -x /etc/init.d/prometheus ]]; then
    /etc/init.d/prometheus stop >/dev/null 2>&1 || true
  fi
  local pid cmd
  for pid in $(pgrep -x prometheus 2>/dev/null || true); do
    cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
    # The packaged daemon runs with /etc/prometheus config and no storage path
    # of ours; ours always carries --storage.tsdb.path=<var>/prometheus/data.
    if [[ "$cmd" != *"--storage.tsdb.path="* && "$(stat -c %U "/proc/$pid" 2>/dev/null)" == "prometheus" ]]; then
      log "stopping the packaged prometheus service (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
}

cmd_install() {
  if have_binaries; then
    [[ "${1:-}" == "--quiet" ]] && return 0
    log "already installed: $(prometheus --version 2>&1 | head -n1)"
    return 0
  fi
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install prometheus"
    sudo=(sudo)
  fi
  # Keep the package's postinst from starting its service: a policy-rc.d that
  # denies every start, only for the duration of the install (unless one
  # already exists, as in most containers).
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    made_policy=1
  fi
  log "installing Debian package prometheus (apt-get update + install)"
  local t0=$SECONDS rc=0
  {
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends prometheus
  } >"/tmp/nuggetflow-prometheus-apt.$$.log" 2>&1 || rc=$?
  if (( made_policy )); then "${sudo[@]}" rm -f "$policy"; fi
  if (( rc != 0 )); then
    tail -n 30 "/tmp/nuggetflow-prometheus-apt.$$.log" >&2
    die "apt-get install prometheus failed (full log /tmp/nuggetflow-prometheus-apt.$$.log)"
  fi
  rm -f "/tmp/nuggetflow-prometheus-apt.$$.log"
  stop_packaged_service
  have_binaries || die "prometheus/promtool still missing after apt-get install"
  log "installed $(prometheus --version 2>&1 | head -n1) in $((SECONDS - t0))s"
}

# ------------------------------------------------------------------ helpers --
read_pid() {
  if [[ -f "$PID_FILE" ]]; then tr -dc '0-9' <"$PID_FILE"; fi
}

is_ours() {
  local pid="$1"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  local cmd
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *prometheus*"--storage.tsdb.path=$DATA_DIR "* ]]
}

running_pid() {
  local pid
  pid="$(read_pid)"
  if is_ours "$pid"; then echo "$pid"; fi
}


http_ok() { curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null; }

resolve_config() {
  local cfg="${1:-${NUGGETFLOW_PROMETHEUS_CONFIG:-}}"
  if [[ -z "$cfg" ]]; then
    [[ -f "$DEFAULT_CONFIG" ]] || die "no config: pass one (start CONFIG), set NUGGETFLOW_PROMETHEUS_CONFIG, or create $DEFAULT_CONFIG"
    cfg="$DEFAULT_CONFIG"
  fi
  [[ -f "$cfg" ]] || die "config file not found: $cfg"
  echo "$(cd "$(dirname "$cfg")" && pwd)/$(basename "$cfg")"
}

# ----------------------------------------------------------------- commands --
cmd_check() {
  [[ $# -ge 1 ]] || die "usage: check CONFIG"
  cmd_install --quiet
  promtool check config "$1"
}

cmd_start() {
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    log "already running (pid $pid, $BASE_URL)"
    return 0
  fi
  local cfg
  cfg="$(resolve_config "${1:-}")"
  cmd_install --quiet
  port_open "$PORT" && die "port $PORT on 127.0.0.1 is already in use by another process"
  mkdir -p "$DATA_DIR"
  promtool check config "$cfg" >"$PROM_VAR/check.log" 2>&1 || {
    cat "$PROM_VAR/check.log" >&2; die "invalid config $cfg"; }
  rm -f "$PID_FILE"
  echo "===== prometheus.sh start $(date -u +%Y-%m-%dT%H:%M:%SZ) config=$cfg =====" >>"$LOG_FILE"
  log "starting $(prometheus --version 2>&1 | head -n1 | awk '{print $1, $2, $3}') on $BASE_URL (config $cfg)"
  local t0=$SECONDS
  (
    cd "$PROM_VAR"
    exec setsid nohup prometheus \
      "--config.file=$cfg" \
      "--storage.tsdb.path=$DATA_DIR" \
      "--storage.tsdb.retention.time=$RETENTION" \
      "--web.listen-address=127.0.0.1:$PORT" \
      --web.enable-lifecycle
  ) >>"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"

  until http_ok "$BASE_URL/-/ready"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      echo "----- tail of $LOG_FILE -----" >&2
      tail -n 30 "$LOG_FILE" >&2 || true
      die "prometheus (pid $pid) exited during startup"
    fi
    if (( SECONDS - t0 >= START_TIMEOUT )); then
      echo "----- tail of $LOG_FILE -----" >&2
      tail -n 30 "$LOG_FILE" >&2 || true
      log "not ready after ${START_TIMEOUT}s; stopping it"
      cmd_stop >&2 || true
      die "prometheus did not become ready within ${START_TIMEOUT}s"
    fi
    sleep 0.5
  done
  log "ready in $((SECONDS - t0))s (pid $pid, $BASE_URL, data $DATA_DIR)"
}

cmd_stop() { stop_process "$(running_pid)" "$STOP_TIMEOUT" "$PID_FILE"; }

cmd_status() {
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    log "not running"
    return 3
  fi
  if http_ok "$BASE_URL/-/ready"; then
    log "running and ready (pid $pid, $BASE_URL, data $DATA_DIR)"
  else
    log "process $pid alive but $BASE_URL/-/ready does not answer yet"
  fi
}

cmd_reload() {
  [[ -n "$(running_pid)" ]] || die "not running"
  curl -fsS -X POST --max-time 10 "$BASE_URL/-/reload" >/dev/null || die "reload failed (see $LOG_FILE)"
  log "config reloaded"
}

cmd_targets() {
  [[ $# -ge 2 ]] || die "usage: targets query|worker HOST:PORT..."
  local job="$1"; shift
  [[ "$job" == "query" || "$job" == "worker" ]] || die "job must be query or worker, not '$job'"
  local addr list=""
  for addr in "$@"; do
    [[ "$addr" =~ ^[A-Za-z0-9_.-]+:[0-9]{1,5}$ ]] || die "not a host:port address: '$addr'"
    list+="${list:+, }\"$addr\""
  done
  local dir="${NUGGETFLOW_PROMETHEUS_TARGETS:-$SCRIPT_DIR/targets}"
  local file="$dir/$job.json"
  mkdir -p "$dir"
  printf '[\n  {"targets": [%s]}\n]\n' "$list" >"$file.tmp" && mv "$file.tmp" "$file"
  log "wrote $file: $*"
}

cmd_reset() {
  cmd_stop
  log "wiping $DATA_DIR"
  rm -rf "$DATA_DIR"
}

cmd_env() {
  cat <<EOF
URL=$BASE_URL
CONFIG=$( (resolve_config "${1:-}") 2>/dev/null || echo "<none>")
VAR_DIR=$VAR_DIR
DATA_DIR=$DATA_DIR
LOG_FILE=$LOG_FILE
PID_FILE=$PID_FILE
RETENTION=$RETENTION
EOF
}

cmd="${1:-}"
[[ $# -gt 0 ]] && shift
case "$cmd" in
  install) cmd_install ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start "$@" ;;
  status) cmd_status ;;
  reload) cmd_reload ;;
  check) cmd_check "$@" ;;
  targets) cmd_targets "$@" ;;
  reset) cmd_reset ;;
  env) cmd_env "$@" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
