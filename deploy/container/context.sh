#!/usr/bin/env bash
# Gathers the build context of deploy/container/Containerfile: the compiled file and the few
# system files it needs, laid out as the image's root (rootfs/), so that the image is built
# FROM scratch, with no base image pulled from a registry.
#   usage: bash deploy/container/context.sh <compiled file> <context directory>
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin # ldconfig
if [ $# -ne 2 ] || [ ! -x "$1" ]; then
  echo "usage: bash deploy/container/context.sh <compiled file (npm run -s build writes dist/queue-api)> <context directory>" >&2
  exit 2
fi
binary=$1
context=$2
rootfs=$context/rootfs
rm -rf "$rootfs" "$context/data"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/tmp" "$context/data"
cp "$binary" "$rootfs/usr/local/bin/queue-api"
# The C library and loader the file links, and the C++ runtime that DuckDB's library (inside
# the file, loaded by `queue-api sync`) needs; each at the path the loader looks for it.
libraries=$(ldd "$binary" | grep -o '/[^ ]*')
# The loader's cache read whole first: `ldconfig -p | grep -m1` under pipefail failed at random,
# ldconfig dying of SIGPIPE when grep stopped reading before it had written everything.
cache=$(ldconfig -p)
for name in libstdc++.so.6 libgcc_s.so.1; do
  path=$(awk -v want="$name" '$1 == want { print $NF; exit }' <<<"$cache")
  [ -n "$path" ] || { echo "context.sh: ldconfig -p lists no $name (install libstdc++6)" >&2; exit 1; }
  libraries+=$'\n'$path
done
for library in $libraries; do
  mkdir -p "$rootfs$(dirname "$library")"
  cp -L "$library" "$rootfs$library"
done
# The service's user: its name for the start-up messages, no shell, no login.
echo 'queue-api:x:10001:10001:queue-api:/data:/nonexistent' > "$rootfs/etc/passwd"
echo 'queue-api:x:10001:' > "$rootfs/etc/group"
# The data directory, copied on its own to be given to that user.
chmod 0700 "$context/data"
chmod 1777 "$rootfs/tmp"
cp "$(dirname "$0")/Containerfile" "$context/Containerfile"
