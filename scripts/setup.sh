#!/usr/bin/env bash
# All the set-up a fresh Debian 12 machine with Node 20 needs; `npm start` and `npm test` run it themselves.
#   bash scripts/setup.sh [tool...]     tools: emcc gcc chromium (default: all three)
#   - Debian packages: emscripten (wasm build), gcc (native C tests), chromium (browser tests), installed with
#     apt-get when missing (as root; otherwise it prints what to install and fails).
#   - node_modules: `npm ci` when missing or installed from a different package-lock.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

(( $# )) || set -- emcc gcc chromium
bash scripts/ensure-tools.sh "$@"

# npm ci replaces node_modules wholesale; the npm running us lives outside it, so this is safe inside `npm test`.
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.posenc-lock.sha256
if [[ ! -d node_modules || "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]]; then
  echo "setup: npm ci (node_modules missing or out of date with package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error </dev/null
  echo "$lock_hash" > "$stamp"
fi
