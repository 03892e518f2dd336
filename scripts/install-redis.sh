#!/usr/bin/env bash
# Installs Debian's redis-server (and redis-cli) for the tests of the Redis limits, if missing.
# The tests start their own redis-server on a free port in a temp directory; the one Debian's
# package starts as a service (where systemd runs) is not needed, so it is stopped and disabled.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
  $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
