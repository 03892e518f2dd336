#!/usr/bin/env bash
# Installs Debian's haproxy for the test of replicas behind a load balancer, if missing. The
# test starts its own haproxy with a generated config on free ports; the one Debian's package
# starts as a service (where systemd runs) is not needed, so it is stopped and disabled.
set -euo pipefail
if command -v haproxy >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends haproxy >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet haproxy 2>/dev/null; then
  $SUDO systemctl disable --now haproxy >/dev/null 2>&1 || true
fi
