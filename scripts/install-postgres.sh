#!/usr/bin/env bash
# Installs Debian's PostgreSQL server and psql for the tests of `sync --into postgresql://…`, if
# missing, and openssl, which makes the certificates of the TLS tests. The tests make their own
# cluster with initdb in a temp directory and start it with pg_ctl on a free port (as the
# postgres user the package creates, since PostgreSQL refuses to run as root); the cluster the
# package may start as a service is not needed, so it is stopped.
set -euo pipefail
has_server() { ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || command -v pg_ctl >/dev/null 2>&1; }
if has_server && command -v psql >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1 && id postgres >/dev/null 2>&1; then
  exit 0
fi
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql postgresql-client openssl >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet postgresql 2>/dev/null; then
  $SUDO systemctl disable --now postgresql >/dev/null 2>&1 || true
elif command -v pg_ctlcluster >/dev/null 2>&1; then
  # Without systemd the package may still have started its default cluster: stop it.
  for cluster in $(pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1 "/" $2 }'); do
    $SUDO pg_ctlcluster "${cluster%/*}" "${cluster#*/}" stop || true
  done
fi
