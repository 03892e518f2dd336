#!/usr/bin/env bash
# Installs Debian's LibreOffice Calc for the test that opens the page's file with names and local
# times as a spreadsheet would (test/browser/names-file.test.ts), if it is not there yet.
set -euo pipefail
if command -v soffice >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libreoffice-calc >/dev/null
