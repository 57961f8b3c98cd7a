#!/usr/bin/env bash
# The provider tier on this machine: Redis, three provider replicas sharing budgets,
# key sets and PIR state in it, HAProxy in front with gRPC health checks; a burst of searches
# during which one replica is SIGKILLed and restarted, a private fetch through the balancer,
# a restart of Redis and every replica. `privsearch cluster demo` starts every process itself
# and stops each by its pid; its exit status is 1 if a search failed or a budget count was lost.
# Usage: scripts/cluster_demo.sh [BEIR_DIR]   (the same collection choice as scripts/demo.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/demo_index.sh  # $build, $bin, $work, demo_index

printf '\n== 0. the demo index\n'
demo_index "${1:-}"
"$bin" cluster demo --index "$index" --queries "$data/queries.jsonl" --work "$build/cluster-demo"
