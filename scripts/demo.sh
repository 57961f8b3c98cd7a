#!/usr/bin/env bash
# The main job end to end on this machine: index a BEIR collection with the built-in encoder,
# start the provider (its own process, no secret-key code) on 127.0.0.1 with a throwaway TLS
# certificate, run text queries through the encrypted path, evaluate every judged query
# (encrypted nDCG@10 next to the plaintext rerank, per-request figures), stop the provider.
# Usage: scripts/demo.sh [BEIR_DIR]   (default ../shared/data/scifact; without it, a collection
# made from this machine's Debian package lists by scripts/debian_corpus.py)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/demo_index.sh  # $build, $bin, $work, demo_index

step() { printf '\n== %s\n' "$*"; }

step "1. index the collection (built-in lexical encoder, SVD to d' = 672, PQ M = 84)"
demo_index "${1:-}"

step "2. start the provider on 127.0.0.1 (self-signed TLS certificate)"
rm -f "$work/port" "$work/fingerprint"
# Request budgets persist in a journal (here the demo's own; by default under ~/.local/state).
"$bin" serve --index "$index" --listen 127.0.0.1:0 --self-signed \
  --state "file:$work/provider-budgets.journal" \
  --port-file "$work/port" --fingerprint-file "$work/fingerprint" 2> "$work/provider.log" &
provider=$!
trap 'kill -TERM $provider 2>/dev/null || true; wait $provider 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  [ -f "$work/port" ] && break
  kill -0 $provider 2>/dev/null || {
    echo "demo: the provider did not start:" >&2
    cat "$work/provider.log" >&2
    exit 1
  }
  sleep 0.2
done
echo "provider log (one JSON line per request, no secret material): $work/provider.log"
port=$(cat "$work/port")
fingerprint=$(cat "$work/fingerprint")

step "3. private searches (the provider sees only the 100 candidate IDs, in random order)"
if [ "$(basename "$data")" = debian-packages ]; then
  queries=("secure shell client" "image editor for photos" "python web framework")
else
  queries=("vitamin D deficiency and cancer risk" "antibiotic resistance in hospital bacteria"
           "stem cells regenerate heart tissue")
fi
"$bin" search --index "$index" --port "$port" --fingerprint "$fingerprint" --top 5 "${queries[@]}"

step "4. access-private searches: the provider sees neither candidates nor clusters"
echo "(m = 8 clusters, the default, scored under LWE, q = 2^64; request and response bytes are"
echo " the same for every query; the client picks the clusters from its own PQ candidates)"
if grep -q '"scoring_layout"' "$index/manifest.json"; then
  "$bin" search --index "$index" --port "$port" --fingerprint "$fingerprint" --top 5 \
    --access-private "${queries[@]}"
else
  echo "(skipped: $index was built before the scoring database existed; delete it to rebuild)"
fi

step "5. every judged query of $(basename "$data") through the encrypted path"
"$bin" search --index "$index" --port "$port" --fingerprint "$fingerprint" --evaluate "$data"

step "6. private payload fetch: the top 3 results read by hintless PIR (the provider learns not which)"
echo "(YPIR+SP: the provider preprocessed its payloads once at start for every client; a new"
echo " client sends its three queries, each with a fresh packing key, in one batch and needs no"
echo " setup and no per-client work: the fetch completes within a second of its search)"
"$bin" search --index "$index" --port "$port" --fingerprint "$fingerprint" --top 3 --fetch 3 \
  "${queries[0]}"

step "7. stop the provider"
kill -TERM $provider
wait $provider || true
trap - EXIT
echo "last lines of the provider log:"
tail -n 3 "$work/provider.log"
echo "done"
