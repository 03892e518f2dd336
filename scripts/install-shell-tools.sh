#!/usr/bin/env bash
# Installs Debian's curl and jq, if missing: the test of docs/api.md's loader runs that shell
# script as a reader would, with curl and jq.
set -euo pipefail
if command -v curl >/dev/null 2>&1 && command -v jq >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends curl jq >/dev/null
