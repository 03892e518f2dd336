#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (test/browser/), if it is not there yet.
# Playwright's own browser download is not reachable from our machines; playwright-core drives
# /usr/bin/chromium instead.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
