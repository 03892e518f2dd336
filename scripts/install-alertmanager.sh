#!/usr/bin/env bash
# Installs Debian's `prometheus-alertmanager` package (alertmanager and amtool) for the tests of
# deploy/alertmanager/, if missing: amtool checks the configuration, and a test starts its own
# alertmanager on a free port with a temp storage directory (the package's own service on port
# 9093 is kept from running).
set -euo pipefail
if command -v amtool >/dev/null 2>&1 && command -v prometheus-alertmanager >/dev/null 2>&1; then
  exit 0
fi
exec bash "$(dirname "$0")/install-without-service.sh" prometheus-alertmanager
