#!/usr/bin/env bash
# The browser client: the WebAssembly core (web/wasm, emscripten), the page's JavaScript
# dependencies (web/package-lock.json, npm), and the page assembled into BUILD_DIR/web, the
# directory `privsearch serve --web-root` serves. Incremental: ccache, ninja, and npm only when
# the lock file changed.
# Usage: scripts/build_web.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
wasm=$build/wasm
out=$build/web

if ! command -v em++ > /dev/null; then
  echo "build_web: emscripten is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
if ! command -v npm > /dev/null; then
  echo "build_web: npm is not installed (apt-get install npm)" >&2
  exit 1
fi
# Debian's emscripten runs its JavaScript tools with node and finds their modules (acorn) here.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

stamp=web/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ web/package-lock.json -nt "$stamp" ]; then
  echo "build_web: npm ci (web/package-lock.json)" >&2
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -f "$wasm/build.ninja" ]; then
  launcher=()
  if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  emcmake cmake -S web/wasm -B "$wasm" -G Ninja "${launcher[@]}" > /dev/null
fi
ninja -C "$wasm" > "$wasm/ninja.log" 2>&1 || { cat "$wasm/ninja.log" >&2; exit 1; }

mkdir -p "$out"
cp web/static/* "$out/"
cp "$wasm/privsearch_web.js" "$wasm/privsearch_web.wasm" "$out/"
cp src/protocol/privsearch.proto "$out/"
cp web/node_modules/protobufjs/dist/protobuf.min.js "$out/"
echo "build_web: the page is in $out (privsearch serve --web-listen HOST:PORT --web-root $out)" >&2
