#!/usr/bin/env bash
# Installs Debian's `prometheus` package (prometheus and promtool) for the metrics tests, if
# missing: promtool checks and unit-tests the alert rules and lints a real scrape, and a test
# starts its own prometheus on a free port with a temp config and data directory.
# The package would start a prometheus service of its own (on port 9090, scraping itself): it is
# kept from starting during the install (policy-rc.d answering 101, "not allowed", as in
# containers), and stopped and disabled afterwards wherever it started anyway.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
elif [ -x /etc/init.d/prometheus ] && /etc/init.d/prometheus status >/dev/null 2>&1; then
  $SUDO /etc/init.d/prometheus stop >/dev/null 2>&1 || true
fi
