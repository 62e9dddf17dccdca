#!/usr/bin/env bash
# Debian's headless browser for the review console's browser tests: the chromium and
# chromium-driver packages (no browser build of its own is downloaded; selenium talks to
# /usr/bin/chromedriver). Idempotent: does nothing when both are installed.
#
#   deploy/browser/install.sh          install when missing, print the versions
#   deploy/browser/install.sh check    exit 0 when both are present, 1 otherwise
set -euo pipefail

have() { command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; }

if [[ "${1:-}" == "check" ]]; then
  have
  exit $?
fi
if ! have; then
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "browser: need root (or sudo) to apt-get install chromium" >&2; exit 1; }
    sudo=(sudo)
  fi
  log="/tmp/nuggetflow-browser-apt.$$.log"
  echo "browser: installing Debian packages chromium chromium-driver (apt-get)" >&2
  if ! { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -q &&
         DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
           chromium chromium-driver fonts-dejavu-core; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    echo "browser: apt-get install chromium chromium-driver failed (log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
fi
have || { echo "browser: chromium or chromedriver still missing" >&2; exit 1; }
echo "browser: $(chromium --version 2>/dev/null | head -n1); $(chromedriver --version 2>/dev/null | head -n1)"
