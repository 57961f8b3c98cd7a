"""What the Python layer adds per search: wall time of Client.search from Python minus the
C++ client's own end-to-end time for the same search (SearchTiming.total_ms), over many
searches against a provider process on loopback. Prints one JSON object (medians, p95, CPU).

Usage: PYTHONPATH=build/python /usr/bin/python3 python/benchmarks/overhead.py [--searches N]
"""
import argparse
import json
import platform
import tempfile
import time

import numpy as np

import privsearch


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--input-dim", type=int, default=768)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    docs = rng.normal(size=(args.docs, args.input_dim)).astype(np.float32)
    queries = rng.normal(size=(args.searches, args.input_dim)).astype(np.float32)
    with tempfile.TemporaryDirectory() as work:
        privsearch.build_index(f"{work}/index", docs)
        with privsearch.Provider(f"{work}/index", args=["--no-pir"]) as provider:
            client = provider.client()
            for q in queries[:10]:  # warm-up: key upload, connections
                client.search(q)
            overhead, wall = [], []
            for q in queries:
                t0 = time.perf_counter()
                client.search(q, k=100, top=10)
                ms = 1000 * (time.perf_counter() - t0)
                wall.append(ms)
                overhead.append(ms - client.last_search_ms)
    pct = lambda v, p: float(np.percentile(v, p))
    print(json.dumps({
        "suite": "python_overhead", "cpu": cpu_model(), "searches": args.searches,
        "docs": args.docs, "input_dim": args.input_dim, "k": 100,
        "search_ms": {"median": pct(wall, 50), "p95": pct(wall, 95)},
        "python_overhead_ms": {"median": pct(overhead, 50), "p95": pct(overhead, 95)},
    }, indent=2))


if __name__ == "__main__":
    main()
