#!/usr/bin/env bash
# Installs the built `privsearch` package (build/python/privsearch) and the provider binary into
# a venv of Debian's python3 at BUILD_DIR/venv; numpy comes from Debian through
# --system-site-packages (nothing is downloaded). Re-running refreshes the installed copy.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
venv=$build/venv
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if [ ! -x "$venv/bin/python3" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
site=$("$venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -rf "$site/privsearch"
cp -r "$build/python/privsearch" "$site/privsearch"
mkdir -p "$site/privsearch/bin"
cp "$build/tools/privsearch-provider" "$site/privsearch/bin/privsearch-provider"
"$venv/bin/python3" -c 'import privsearch, sys; print("privsearch installed in", sys.prefix)'
echo "use it: . $venv/bin/activate; python3 -c 'import privsearch'"
