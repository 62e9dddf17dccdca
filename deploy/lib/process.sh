# shellcheck shell=bash
# Shared by the deploy/ scripts that run a server as a background process.
# Source it after defining log(); it defines no variables.

# True when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# stop_process PID TIMEOUT PID_FILE: SIGTERM, wait up to TIMEOUT seconds, then SIGKILL;
# wait until the process is gone and remove PID_FILE. An empty PID means not running.
stop_process() {
  local pid="$1" timeout="$2" pid_file="$3"
  if [[ -z "$pid" ]]; then
    log "not running"
    rm -f "$pid_file"
    return 0
  fi
  log "stopping pid $pid (SIGTERM)"
  kill -TERM "$pid" 2>/dev/null || true
  local t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if (( SECONDS - t0 >= timeout )); then
      log "still alive after ${timeout}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  rm -f "$pid_file"
  log "stopped in $((SECONDS - t0))s"
}
