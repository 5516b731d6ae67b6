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

# uv, pinned: the env builder (src/env/uv-builder.ts) and its tests run it. From PyPI through pip, into a folder
# under /usr/local (the sandbox binds /usr read-only, so builds inside it can run the same binary).
UV_VERSION=0.13.9
UV_HOME=/usr/local/lib/repgen-uv
if [ "$("$UV_HOME/bin/uv" --version 2>/dev/null | cut -d" " -f1-2)" != "uv $UV_VERSION" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "ensure-system: installing uv $UV_VERSION" >&2
    py=$(command -v python3 || echo /usr/bin/python3)
    "$py" -m pip install -q --disable-pip-version-check --root-user-action=ignore --upgrade --target "$UV_HOME" "uv==$UV_VERSION" >/dev/null 2>&1 ||
      /usr/bin/python3 -m pip install -q --break-system-packages --upgrade --target "$UV_HOME" "uv==$UV_VERSION" >/dev/null || {
      echo "ensure-system: pip install uv==$UV_VERSION failed" >&2; exit 1; }
  else
    echo "ensure-system: missing uv $UV_VERSION — install it with: pip install uv==$UV_VERSION" >&2
    exit 1
  fi
fi
[ -x "$UV_HOME/bin/uv" ] && [ "$(id -u)" = 0 ] && ln -sf "$UV_HOME/bin/uv" /usr/local/bin/uv

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
    for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || {
    echo "ensure-system: no Redis answers on 127.0.0.1:6379 — start one with: redis-server --daemonize yes" >&2; exit 1; }
fi
exit 0
