# shellcheck shell=bash
# Shared by the deploy/ scripts that run a server as a background process.
# Source it after defining log() and die(); it defines no variables.

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

# kill_9 PID_FILE WHAT: kill -9 the process PID_FILE names and wait until it is gone (fault
# tests); fails when it is not running.
kill_9() {
  local pid
  pid="$(tr -dc '0-9' 2>/dev/null <"$1" || true)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || die "$2 is not running"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  log "$2 (pid $pid) killed"
}
