#!/usr/bin/env bash
# Failed requests across rolling restarts (bench/rolling-restart.ts: WORKERS unset, 3 SIGHUPs in
# 10 s) with net.ipv4.tcp_migrate_req off, then on, each in a network namespace of its own: the
# setting is per namespace, so the host's is neither needed nor changed. Prints one JSON line a run.
#   usage (as root, for ip netns): bash bench/rolling-restart-netns.sh [runs per setting, default 3]
set -euo pipefail
runs=${1:-3}
if ! [[ $runs =~ ^[1-9][0-9]?$ ]]; then
  echo "usage: bash bench/rolling-restart-netns.sh [runs per setting, 1 to 99]" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "rolling-restart-netns.sh: run as root (ip netns add needs it)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
namespace=""
trap '[ -z "$namespace" ] || ip netns del "$namespace" 2>/dev/null || true' EXIT
for setting in 0 1; do
  namespace=queue-api-bench-$$-$setting
  ip netns add "$namespace"
  ip -n "$namespace" link set lo up
  ip netns exec "$namespace" sysctl -qw net.ipv4.tcp_migrate_req=$setting
  for _ in $(seq "$runs"); do
    ip netns exec "$namespace" node_modules/.bin/bun bench/rolling-restart.ts --seconds 10 --reloads 3
  done
  ip netns del "$namespace"
  namespace=""
done
