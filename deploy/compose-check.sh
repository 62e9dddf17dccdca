#!/usr/bin/env bash
# Validate deploy/docker-compose.yml (or the base file with overrides, such as
# deploy/docker-compose.cluster.yml) without a docker engine: Debian's `docker-compose`
# (1.29, a Python program) parses, schema-checks and interpolates the file. Installs it with
# `apt-get install --no-install-recommends docker-compose` when missing (no engine, no
# daemon).
# Usage: deploy/compose-check.sh [--print] [COMPOSE_FILE...]
#   exit status of `config -q`; with --print, `config` itself: the files merged as compose
#   will run them (variables interpolated, paths resolved), which tests/unit/deploy reads.
#   Several files are merged in order, as `docker compose -f A -f B` does.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODE=(-q)
if [[ "${1:-}" == "--print" ]]; then
  MODE=()
  shift
fi
FILES=("$@")
(( ${#FILES[@]} )) || FILES=("$SCRIPT_DIR/docker-compose.yml")
ARGS=()
for f in "${FILES[@]}"; do ARGS+=(-f "$f"); done

if ! command -v docker-compose >/dev/null 2>&1; then
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "compose-check: need root or sudo to apt-get install docker-compose" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "compose-check: installing Debian's docker-compose (no recommends: no engine)" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends docker-compose >/dev/null
fi

exec docker-compose "${ARGS[@]}" config ${MODE[@]+"${MODE[@]}"}
