#!/usr/bin/env bash
# Installs the Debian package $1, whose own service (named like the package) the tests must not
# have running: it is kept from starting during the install (policy-rc.d answering 101, "not
# allowed", as in containers), and stopped and disabled afterwards wherever it started anyway.
# The tests start their own instance on a free port.
set -euo pipefail
package=$1
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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$package" >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$package" 2>/dev/null; then
  $SUDO systemctl disable --now "$package" >/dev/null 2>&1 || true
elif [ -x "/etc/init.d/$package" ] && "/etc/init.d/$package" status >/dev/null 2>&1; then
  $SUDO "/etc/init.d/$package" stop >/dev/null 2>&1 || true
fi
