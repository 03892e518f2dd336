#!/usr/bin/env bash
# Installs what the packaging tests use, if missing: systemd-analyze (Debian's `systemd`) to
# verify deploy/systemd/queue-api.service, podman to build deploy/container/Containerfile (no
# registry is reached: the image is FROM scratch), and setpriv (util-linux) to run the compiled
# file as an unprivileged user.
set -euo pipefail
missing=()
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
