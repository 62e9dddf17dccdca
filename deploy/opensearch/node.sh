#!/usr/bin/env bash
# Run a real single-node OpenSearch (2.19.x, with k-NN) on this machine: no docker, no
# OpenSearch tarball. Jars come from Maven Central (pom.xml next to this script); a small Java
# launcher (launcher/NuggetflowNode.java) starts org.opensearch.node.Node with the plugins on
# the classpath. See README.md in this directory.
set -euo pipefail
shopt -s inherit_errexit  # make "set -e" apply inside $(...) too

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
POM="$SCRIPT_DIR/pom.xml"
LAUNCHER_SRC="$SCRIPT_DIR/launcher/NuggetflowNode.java"
LOG4J_CONFIG="$SCRIPT_DIR/log4j2.properties"

# Single source of truth for the version: the POM.
OS_VERSION="$(sed -n 's:.*<opensearch.version>\(.*\)</opensearch.version>.*:\1:p' "$POM" | head -n1)"
[[ -n "$OS_VERSION" ]] || { echo "node.sh: cannot read <opensearch.version> from $POM" >&2; exit 1; }

# absolute paths: the JVM gets them as settings
CACHE_DIR="$(realpath -m "${NUGGETFLOW_CACHE_DIR:-$HOME/.cache/nuggetflow}/opensearch-$OS_VERSION")"
VAR_DIR="$(realpath -m "${NUGGETFLOW_VAR_DIR:-$REPO_ROOT/var}")"
OS_VAR="$VAR_DIR/opensearch"          # also path.home (config/ lives here)
DATA_DIR="$OS_VAR/data"
LOG_DIR="$OS_VAR/logs"
PID_FILE="$OS_VAR/opensearch.pid"
HTTP_PORT="${NUGGETFLOW_OPENSEARCH_PORT:-19200}"
TRANSPORT_PORT="${NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT:-19300}"
HEAP="${NUGGETFLOW_OPENSEARCH_HEAP:-1g}"
START_TIMEOUT="${NUGGETFLOW_OPENSEARCH_START_TIMEOUT:-180}"
STOP_TIMEOUT="${NUGGETFLOW_OPENSEARCH_STOP_TIMEOUT:-60}"
DEFAULT_REPLICAS="${NUGGETFLOW_OPENSEARCH_DEFAULT_REPLICAS:-0}"
# Cluster mode (deploy/opensearch/cluster.sh sets these): seed hosts instead of single-node
# discovery, the node's name, the initial cluster-manager nodes, and start without waiting
# for the cluster (one node of several cannot form it alone).
CLUSTER_NAME="${NUGGETFLOW_OPENSEARCH_CLUSTER_NAME:-nuggetflow}"
NODE_NAME="${NUGGETFLOW_OPENSEARCH_NODE_NAME:-nuggetflow-node}"
SEED_HOSTS="${NUGGETFLOW_OPENSEARCH_SEED_HOSTS:-}"
INITIAL_MANAGERS="${NUGGETFLOW_OPENSEARCH_INITIAL_MANAGERS:-}"
WAIT="${NUGGETFLOW_OPENSEARCH_WAIT:-1}"
MVN="${NUGGETFLOW_MVN:-mvn}"
URL="http://127.0.0.1:$HTTP_PORT"
MAIN_CLASS="NuggetflowNode"

usage() {
    cat <<EOF
usage: $(basename "$0") COMMAND [-Ekey=value ...]

Runs one OpenSearch $OS_VERSION node (k-NN, analysis-common, mapper-extras, painless, reindex)
on 127.0.0.1 from jars fetched with Maven. No docker, no OpenSearch tarball.

commands:
  install   fetch the jars (mvn) and compile the launcher into the cache; quick when cached
  start     install if needed, start the node in the background, wait until the cluster is
            green (bounded by NUGGETFLOW_OPENSEARCH_START_TIMEOUT; on failure the log tail is
            printed, the node is stopped and the exit code is 1); no-op if already running.
            Extra -Ekey=value arguments are passed to the node as settings.
  stop      SIGTERM the node (clean shutdown), SIGKILL after NUGGETFLOW_OPENSEARCH_STOP_TIMEOUT
  restart   stop, then start
  status    print whether the node is up and its URL (exit 0 if up, 3 if not running, 1 if
            the process exists but does not answer)
  logs      print the last lines of the node's logs
  url       print the node's base URL

environment (current value):
  NUGGETFLOW_OPENSEARCH_PORT              HTTP port                ($HTTP_PORT)
  NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT    transport port           ($TRANSPORT_PORT)
  NUGGETFLOW_OPENSEARCH_HEAP              max JVM heap (-Xmx)      ($HEAP)
  NUGGETFLOW_VAR_DIR                      state dir                ($VAR_DIR)
                                          data: \$NUGGETFLOW_VAR_DIR/opensearch/data, logs: .../logs,
                                          pid: .../opensearch.pid
  NUGGETFLOW_CACHE_DIR                    download/compile cache   (${NUGGETFLOW_CACHE_DIR:-$HOME/.cache/nuggetflow})
  NUGGETFLOW_OPENSEARCH_START_TIMEOUT     seconds to wait for green ($START_TIMEOUT)
  NUGGETFLOW_OPENSEARCH_STOP_TIMEOUT      seconds before SIGKILL    ($STOP_TIMEOUT)
  NUGGETFLOW_OPENSEARCH_DEFAULT_REPLICAS  persistent cluster.default_number_of_replicas
                                          set after start ("" to leave alone) ($DEFAULT_REPLICAS)
  NUGGETFLOW_OPENSEARCH_SEED_HOSTS        cluster mode: transport host:port list of the other
                                          nodes (empty: single-node discovery) ($SEED_HOSTS)
  NUGGETFLOW_OPENSEARCH_INITIAL_MANAGERS  cluster mode: node names that elect the first
                                          cluster manager ($INITIAL_MANAGERS)
  NUGGETFLOW_OPENSEARCH_NODE_NAME, NUGGETFLOW_OPENSEARCH_CLUSTER_NAME
                                          ($NODE_NAME, $CLUSTER_NAME)
  NUGGETFLOW_OPENSEARCH_WAIT              0: start returns once the process runs, without
                                          waiting for the cluster ($WAIT)
  JAVA_HOME                               JDK (17+) to use; else java/javac from PATH
  NUGGETFLOW_MVN                          maven command         ($MVN)
EOF
}

log() { echo "node.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------------------------- java
java_bin() {
    if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/$1" ]]; then
        echo "$JAVA_HOME/bin/$1"
    elif command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
    else
        die "$1 not found: install a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
    fi
}

java_major() {
    local v
    v="$("$(java_bin java)" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')"
    echo "${v#1.}"
}

# ------------------------------------------------------------------------------- install
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

with_lock() {  # with_lock LOCKFILE CMD...: serialise concurrent installs/starts
    local lock="$1"; shift
    mkdir -p "$(dirname "$lock")"
    if command -v flock >/dev/null 2>&1; then
        (
            flock 9
            "$@"
        ) 9>"$lock"
    else
        "$@"
    fi
}

do_install() {
    local deps_hash classes_hash major
    mkdir -p "$CACHE_DIR"
    deps_hash="$(hash_of "$POM")"
    classes_hash="$(hash_of "$POM" "$LAUNCHER_SRC")"

    if [[ "$(cat "$CACHE_DIR/.deps-stamp" 2>/dev/null)" != "$deps_hash" ]]; then
        command -v "$MVN" >/dev/null 2>&1 || die "maven ($MVN) not found: apt-get install maven"
        log "fetching OpenSearch $OS_VERSION jars into $CACHE_DIR (maven)"
        rm -rf "${CACHE_DIR:?}/lib" "$CACHE_DIR/knn-plugin" "$CACHE_DIR/maven" "$CACHE_DIR/.deps-stamp"
        # JAVA_HOME for maven itself: whatever is configured; the download does not depend on it.
        # (the sed strips the colour codes Debian's mvn prints even with -B -q)
        "$MVN" -B -q -Dstyle.color=never -f "$POM" generate-resources "-Dnuggetflow.opensearch.cache=$CACHE_DIR" 2>&1 \
            | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' >&2 \
            || die "maven failed to fetch the OpenSearch jars (see output above)"
        [[ -f "$CACHE_DIR/lib/opensearch-$OS_VERSION.jar" ]] || die "maven ran but $CACHE_DIR/lib/opensearch-$OS_VERSION.jar is missing"
        compgen -G "$CACHE_DIR/knn-plugin/opensearch-knn-*.jar" >/dev/null || die "k-NN plugin jars missing in $CACHE_DIR/knn-plugin"
        check_knn_version
        check_duplicate_jars
        rm -rf "$CACHE_DIR/maven"
        echo "$deps_hash" >"$CACHE_DIR/.deps-stamp"
    fi

    if [[ "$(cat "$CACHE_DIR/.classes-stamp" 2>/dev/null)" != "$classes_hash" ]]; then
        major="$(java_major)"
        (( major >= 17 )) || die "Java $major found; the launcher needs Java 17+ (set JAVA_HOME)"
        log "compiling launcher with $(java_bin javac) (Java $major)"
        rm -rf "${CACHE_DIR:?}/classes" "$CACHE_DIR/.classes-stamp"
        mkdir -p "$CACHE_DIR/classes"
        "$(java_bin javac)" -nowarn --release 17 -encoding UTF-8 -d "$CACHE_DIR/classes" \
            -cp "$(classpath)" "$LAUNCHER_SRC" || die "javac failed"
        echo "$classes_hash" >"$CACHE_DIR/.classes-stamp"
    fi
}

check_knn_version() {
    # The k-NN plugin is built against one exact server version.
    local want
    want="$(sed -n 's/^opensearch\.version=//p' "$CACHE_DIR/knn-plugin/plugin-descriptor.properties")"
    [[ "$want" == "$OS_VERSION" ]] \
        || die "k-NN plugin was built for OpenSearch $want, but pom.xml pins $OS_VERSION: fix knn.version/opensearch.version"
}

check_duplicate_jars() {
    # lib/ (maven-resolved) and knn-plugin/ (ZIP contents) share one classpath: refuse two
    # versions of the same artifact.
    local f base dups=""
    for f in "$CACHE_DIR"/knn-plugin/*.jar; do
        base="$(basename "$f" | sed -E 's/-[0-9][^-]*(-jre)?\.jar$//')"
        if compgen -G "$CACHE_DIR/lib/$base-[0-9]*.jar" >/dev/null; then
            dups+=" $(basename "$f")"
        fi
    done
    [[ -z "$dups" ]] || die "k-NN plugin jars clash with server dependencies:$dups"
}

classpath() { echo "$CACHE_DIR/classes:$CACHE_DIR/lib/*:$CACHE_DIR/knn-plugin/*"; }

installed() {
    [[ "$(cat "$CACHE_DIR/.deps-stamp" 2>/dev/null)" == "$(hash_of "$POM")" &&
       "$(cat "$CACHE_DIR/.classes-stamp" 2>/dev/null)" == "$(hash_of "$POM" "$LAUNCHER_SRC")" ]]
}

cmd_install() {
    if installed; then
        log "already installed in $CACHE_DIR"
        return 0
    fi
    with_lock "$CACHE_DIR.lock" do_install
    log "installed OpenSearch $OS_VERSION in $CACHE_DIR"
}

# ------------------------------------------------------------------------------ process
node_pid() {  # prints the pid if the pid file names a live NuggetflowNode JVM
    local pid
    [[ -f "$PID_FILE" ]] || return 1
    pid="$(tr -dc '0-9' <"$PID_FILE")"
    [[ -n "$pid" ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    # guard against a recycled pid
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS" || return 1
    echo "$pid"
}

# prints green/yellow/red, or nothing if the node does not answer (never fails)
health_status() {
    local json
    json="$(curl -s --max-time "${1:-5}" "$URL/_cluster/health" 2>/dev/null)" || true
    sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' <<<"$json"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Heap: -Xmx from NUGGETFLOW_OPENSEARCH_HEAP; -Xms is 512m (or the max heap if smaller).
heap_mb() {
    local v="${1,,}" n
    n="${v%[kmgt]}"
    [[ "$n" =~ ^[0-9]+$ ]] || die "bad NUGGETFLOW_OPENSEARCH_HEAP '$1' (use e.g. 512m, 1g)"
    case "$v" in
        *k) echo $(( n / 1024 )) ;;
        *m) echo "$n" ;;
        *g) echo $(( n * 1024 )) ;;
        *t) echo $(( n * 1024 * 1024 )) ;;
        *) echo $(( n / 1024 / 1024 )) ;;
    esac
}

tail_logs() {
    local f
    for f in "$LOG_DIR/stdout.log" "$LOG_DIR/opensearch.log"; do
        if [[ -s "$f" ]]; then
            echo "----- tail -n ${1:-40} $f" >&2
            tail -n "${1:-40}" "$f" >&2
        fi
    done
}

launch() {
    local max_mb min_mb pid
    max_mb="$(heap_mb "$HEAP")"
    min_mb=$(( max_mb < 512 ? max_mb : 512 ))
    mkdir -p "$DATA_DIR" "$LOG_DIR" "$OS_VAR/config" "$OS_VAR/tmp"

    local jvm_opts=(
        "-Xms${min_mb}m" "-Xmx${max_mb}m" -Xss1m
        -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -XX:-OmitStackTraceInFastThrow
        "-XX:ErrorFile=$LOG_DIR/hs_err_pid%p.log"
        -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djna.nosys=true
        "-Djava.io.tmpdir=$OS_VAR/tmp"
        # the same netty defaults as OpenSearch's jvm.options
        -Dio.netty.noUnsafe=true -Dio.netty.noKeySetOptimization=true
        -Dio.netty.recycler.maxCapacityPerThread=0 -Dio.netty.allocator.numDirectArenas=0
        # logging: our own file config; the launcher's shutdown hook stops log4j after the node
        "-Dlog4j2.configurationFile=$LOG4J_CONFIG" "-Dnuggetflow.opensearch.logs=$LOG_DIR"
        -Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true
    )
    local discovery=(-Ediscovery.type=single-node)
    if [[ -n "$SEED_HOSTS" ]]; then
        discovery=("-Ediscovery.seed_hosts=$SEED_HOSTS"
                   "-Ecluster.initial_cluster_manager_nodes=$INITIAL_MANAGERS")
    fi
    local settings=(
        "-Epath.home=$OS_VAR" "-Epath.data=$DATA_DIR" "-Epath.logs=$LOG_DIR"
        "-Ecluster.name=$CLUSTER_NAME" "-Enode.name=$NODE_NAME"
        "${discovery[@]}"
        -Enetwork.host=127.0.0.1
        "-Ehttp.port=$HTTP_PORT" "-Etransport.port=$TRANSPORT_PORT"
        -Ecluster.routing.allocation.disk.threshold_enabled=false
        "$@"
    )
    log "starting OpenSearch $OS_VERSION on $URL (heap ${min_mb}m..${max_mb}m, data $DATA_DIR)"
    # stdin from /dev/null and output to a file, so callers capturing our output don't hang;
    # fd 9 (the start lock) must not be inherited, or the JVM would hold the lock forever.
    nohup "$(java_bin java)" "${jvm_opts[@]}" -cp "$(classpath)" "$MAIN_CLASS" "${settings[@]}" \
        >>"$LOG_DIR/stdout.log" 2>&1 </dev/null 9>&- &
    pid=$!
    echo "$pid" >"$PID_FILE"
    echo "$pid"
}

# Green, or yellow that can never become green on one node (every primary started, nothing
# initializing: only replica copies are unassigned).
cluster_ready() {
    local status shards
    status="$(health_status 5)"
    [[ "$status" == green ]] && return 0
    [[ "$status" == yellow ]] || return 1
    shards="$(curl -s --max-time 5 "$URL/_cat/shards?h=prirep,state" 2>/dev/null)" || return 1
    if ! grep -Eq '^p +(INITIALIZING|UNASSIGNED|RELOCATING)|^r +(INITIALIZING|RELOCATING)' <<<"$shards"; then
        log "WARNING: cluster is yellow: some index has replicas > 0, which one node cannot host"
        return 0
    fi
    return 1
}

do_start() {
    local pid deadline status replicas_done=""
    if pid="$(node_pid)"; then
        if [[ "$(health_status 5)" =~ ^(green|yellow)$ ]]; then
            log "already running (pid $pid) at $URL"
            return 0
        fi
        log "process $pid is running but not answering yet; waiting for it"
    else
        rm -f "$PID_FILE"
        if port_in_use "$HTTP_PORT"; then
            die "port $HTTP_PORT is already in use by another process (set NUGGETFLOW_OPENSEARCH_PORT)"
        fi
        if port_in_use "$TRANSPORT_PORT"; then
            die "port $TRANSPORT_PORT is already in use by another process (set NUGGETFLOW_OPENSEARCH_TRANSPORT_PORT)"
        fi
        pid="$(launch "$@")"
        if [[ "$WAIT" == 0 ]]; then
            log "launched (pid $pid) at $URL; not waiting for the cluster (NUGGETFLOW_OPENSEARCH_WAIT=0)"
            return 0
        fi
    fi

    deadline=$(( SECONDS + START_TIMEOUT ))
    while (( SECONDS < deadline )); do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$PID_FILE"
            log "OpenSearch exited during startup"
            tail_logs 60
            return 1
        fi
        status="$(health_status 5)"
        if [[ "$status" =~ ^(green|yellow)$ ]]; then
            if [[ -z "$replicas_done" && -n "$DEFAULT_REPLICAS" ]]; then
                # A single node can never host replicas: make new indices default to 0 of them
                # (persistent cluster setting, so it also holds after restarts).
                curl -s --max-time 10 -XPUT "$URL/_cluster/settings" -H 'Content-Type: application/json' \
                    -d "{\"persistent\":{\"cluster.default_number_of_replicas\":$DEFAULT_REPLICAS}}" >/dev/null \
                    && replicas_done=1
            fi
            if cluster_ready; then
                log "up (pid $pid) at $URL, cluster status $(health_status 5), $(( START_TIMEOUT - (deadline - SECONDS) ))s"
                return 0
            fi
        fi
        sleep 1
    done
    log "OpenSearch did not become ready within ${START_TIMEOUT}s (status: ${status:-no answer}); stopping it"
    tail_logs 60
    do_stop
    return 1
}

cmd_start() {
    heap_mb "$HEAP" >/dev/null  # validate before anything is started
    cmd_install
    with_lock "$OS_VAR/.lock" do_start "$@"
}

do_stop() {
    local pid deadline
    if ! pid="$(node_pid)"; then
        rm -f "$PID_FILE"
        log "not running"
        return 0
    fi
    log "stopping pid $pid (SIGTERM)"
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$(( SECONDS + STOP_TIMEOUT ))
    while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "still running after ${STOP_TIMEOUT}s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
    fi
    rm -f "$PID_FILE"
    log "stopped"
}

cmd_stop() { with_lock "$OS_VAR/.lock" do_stop; }

cmd_status() {
    local pid status
    if ! pid="$(node_pid)"; then
        echo "OpenSearch $OS_VERSION: not running (expected at $URL)"
        return 3
    fi
    status="$(health_status 5)"
    if [[ -n "$status" ]]; then
        echo "OpenSearch $OS_VERSION: up (pid $pid) at $URL, cluster status $status"
        return 0
    fi
    echo "OpenSearch $OS_VERSION: process $pid exists but $URL does not answer"
    return 1
}

main() {
    local cmd="${1:-}"
    [[ $# -gt 0 ]] && shift
    case "$cmd" in
        install) cmd_install ;;
        start) cmd_start "$@" ;;
        stop) cmd_stop ;;
        restart) cmd_stop; cmd_start "$@" ;;
        status) cmd_status ;;
        logs) tail_logs "${1:-100}" 2>&1 ;;
        url) echo "$URL" ;;
        -h|--help|help) usage ;;
        "") usage >&2; exit 2 ;;
        *) log "unknown command '$cmd'"; usage >&2; exit 2 ;;
    esac
}

main "$@"
