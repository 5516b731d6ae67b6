#!/usr/bin/env bash
# Make sure the Debian packages in system-packages.txt are installed and Redis answers on 127.0.0.1:6379.
# As root with apt-get: installs what is missing (one apt-get call) and starts redis-server.
# Otherwise: names each missing piece, with the command that installs it, and exits 1.
# Used by .ci/run and by `npm test` (pretest), so the list of what the tests need lives in one file.
set -uo pipefail
cd "$(dirname "$0")/.."
list=system-packages.txt
missing=()
while read -r pkg; do
  case "$pkg" in ''|'#'*) continue ;; esac
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done < "$list"

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ensure-system: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || {
      echo "ensure-system: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
  else
    for pkg in "${missing[@]}"; do
      echo "ensure-system: missing Debian package $pkg — install it with: sudo apt-get install $pkg" >&2
    done
    exit 1
  fi
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || {
    echo "ensure-system: no Redis answers on 127.0.0.1:6379 — start one with: redis-server --daemonize yes" >&2; exit 1; }
fi
exit 0
