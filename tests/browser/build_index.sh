#!/usr/bin/env bash
# The browser tests' SciFact index (ctest fixture `browser_index`), built once by the CLI and
# rebuilt when the CLI is newer than it; written beside and renamed, so a killed build leaves
# no half index. Usage: build_index.sh PRIVSEARCH BEIR_DIR OUT
set -euo pipefail
bin=$1 data=$2 out=$3
if [ -f "$out/manifest.json" ] && [ "$out/manifest.json" -nt "$bin" ]; then
  echo "browser index: reusing $out"
  exit 0
fi
rm -rf "$out" "$out.partial"
"$bin" build --collection "$data" --out "$out.partial" > "$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
mv "$out.partial" "$out"
echo "browser index: built $out"
