#!/usr/bin/env bash
# Private search from a web page: the demo's index (scripts/lib/demo_index.sh) served by a
# provider whose browser endpoint also serves the page (BUILD_DIR/web, `make web`) on
# https://127.0.0.1:${WEB_PORT:-8443}/ with a throwaway self-signed certificate. Open the URL in
# Chromium (the certificate's SPKI pin is printed), type a query; the provider's log (one JSON
# line per request: sizes and times only) is printed as it comes. Ctrl-C stops the provider.
# Usage: scripts/web_demo.sh [BEIR_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
bin=$build/tools/privsearch
work=$build/web-demo
port=${WEB_PORT:-8443}
. scripts/lib/demo_index.sh
demo_index "${1:-}"
[ -f "$build/web/privsearch_web.wasm" ] || { echo "web-demo: run \`make web\` first" >&2; exit 1; }

mkdir -p "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 7 -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> /dev/null
spki=$(openssl x509 -in "$work/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
       openssl dgst -sha256 -binary | base64)
rm -f "$work/web.port"
"$bin" serve --index "$index" --listen 127.0.0.1:0 --cert "$work/cert.pem" --key "$work/key.pem" \
  --state memory --web-listen "127.0.0.1:$port" --web-root "$build/web" --web-payloads \
  --web-port-file "$work/web.port" &
provider=$!
trap 'kill -TERM $provider 2>/dev/null || true; wait $provider 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 600); do
  [ -f "$work/web.port" ] && break
  kill -0 $provider 2>/dev/null || { echo "web-demo: the provider did not start" >&2; exit 1; }
  sleep 0.2
done
cat <<MSG

  The page: https://127.0.0.1:$port/
  Its certificate is self-signed; start Chromium trusting only it:
    chromium --ignore-certificate-errors-spki-list=$spki https://127.0.0.1:$port/
  Ctrl-C stops the provider.

MSG
wait $provider
