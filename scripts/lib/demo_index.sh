# Sourced by scripts/demo.sh and scripts/cluster_demo.sh from the repository root: sets $build
# ($BUILD_DIR, default build), $bin (the privsearch CLI) and $work (the demo's directory), and
# defines demo_index, which picks the demo's collection and builds its index once. demo_index
# takes $1 (a BEIR directory, or empty for ../shared/data/scifact, else a collection made from
# this machine's Debian package lists by scripts/debian_corpus.py) and sets $data and $index.
build=${BUILD_DIR:-build}
bin=$build/tools/privsearch
work=$build/demo

demo_index() {
  data=${1:-../shared/data/scifact}
  if [ -z "${1:-}" ] && [ ! -f "$data/corpus.jsonl" ]; then
    # No shared data on this machine: a real corpus every Debian machine has, the package lists.
    data=$work/debian-packages
    if [ ! -f "$data/corpus.jsonl" ]; then
      echo "demo: ../shared/data/scifact not found; building a collection from apt-cache dumpavail"
      python3 scripts/debian_corpus.py "$data"
    fi
  fi
  if [ ! -f "$data/corpus.jsonl" ]; then
    echo "demo: no BEIR collection at $data (corpus.jsonl, queries.jsonl, qrels/test.tsv)" >&2
    exit 1
  fi
  index=$work/index-$(basename "$data")
  mkdir -p "$work"
  if [ -f "$index/manifest.json" ]; then
    echo "reusing $index (delete it to rebuild)"
  else
    "$bin" build --collection "$data" --out "$index"
  fi
}
