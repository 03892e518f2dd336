#!/usr/bin/env bash
# Installs Debian's faketime (libfaketime), if missing: a test steps the wall clock of a real
# server process with it, through a file the library reads at every clock call.
set -euo pipefail
if ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends faketime >/dev/null
