#!/usr/bin/env bash
# Installs Debian's `prometheus` package (prometheus and promtool) for the metrics tests, if
# missing: promtool checks and unit-tests the alert rules and lints a real scrape, and a test
# starts its own prometheus on a free port with a temp config and data directory (the package's
# own service on port 9090 is kept from running).
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi
exec bash "$(dirname "$0")/install-without-service.sh" prometheus
