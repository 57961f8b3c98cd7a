#!/usr/bin/env python3
"""Checks a BEIR-layout collection for the demo: corpus, queries and qrels present, every qrel
naming a known query and document, no temporary directory left beside it. Exit 1 with the
reason otherwise. Usage: check_beir_collection.py DIR"""
import json
import os
import sys


def main() -> int:
    d = sys.argv[1]
    try:
        docs = {json.loads(l)["_id"] for l in open(os.path.join(d, "corpus.jsonl"))}
        qs = {json.loads(l)["_id"] for l in open(os.path.join(d, "queries.jsonl"))}
        lines = open(os.path.join(d, "qrels", "test.tsv")).read().splitlines()[1:]
    except (OSError, ValueError, KeyError) as e:
        print(f"check_beir_collection: {e}")
        return 1
    rows = [l.split("\t") for l in lines]
    problems = []
    if len(docs) < 100 or len(qs) < 10 or not rows:
        problems.append("collection too small")
    bad = [r for r in rows if len(r) != 3 or r[0] not in qs or r[1] not in docs]
    if bad:
        problems.append(f"{len(bad)} qrels name unknown ids, e.g. {bad[0]}")
    if os.path.exists(d.rstrip("/") + ".tmp"):
        problems.append("temporary directory left behind")
    for p in problems:
        print(f"check_beir_collection: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
