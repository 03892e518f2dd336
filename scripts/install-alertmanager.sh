#!/usr/bin/env bash
# Installs Debian's `prometheus-alertmanager` package (alertmanager and amtool) for the tests of
# deploy/alertmanager/, if missing: amtool checks the configuration, and a test starts its own
# alertmanager on a free port with a temp storage directory.
# The package would start an alertmanager service of its own (on port 9093): it is kept from
# starting during the install (policy-rc.d answering 101, "not allowed", as in containers), and
# stopped and disabled afterwards wherever it started anyway.
set -euo pipefail
if command -v amtool >/dev/null 2>&1 && command -v prometheus-alertmanager >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
policy=/usr/sbin/policy-rc.d
added_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 755 "$policy"
  added_policy=true
fi
cleanup() { if [ "$added_policy" = true ]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus-alertmanager >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus-alertmanager 2>/dev/null; then
  $SUDO systemctl disable --now prometheus-alertmanager >/dev/null 2>&1 || true
elif [ -x /etc/init.d/prometheus-alertmanager ] && /etc/init.d/prometheus-alertmanager status >/dev/null 2>&1; then
  $SUDO /etc/init.d/prometheus-alertmanager stop >/dev/null 2>&1 || true
fi
