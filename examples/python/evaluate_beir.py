"""Evaluate privsearch on a BEIR collection from Python: build an index with the built-in text
encoder, start the provider, run the judged queries through the private (encrypted) path, and
report nDCG@10 (corpus ids come from the index's row order, the same order as corpus.jsonl).

Usage: evaluate_beir.py [BEIR_DIR] [--queries N]   (default: ../shared/data/cranfield)
"""
import argparse
import csv
import json
import math
import os
import pathlib
import tempfile
import time

import privsearch


def ndcg_at_10(ranked, relevant):
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def main():
    shared = pathlib.Path(os.environ.get("PRIVSEARCH_SHARED", pathlib.Path(__file__).parents[2] / ".." / "shared"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", nargs="?", default=str(shared / "data" / "cranfield"))
    parser.add_argument("--queries", type=int, default=0, help="judged queries to run (0: all)")
    args = parser.parse_args()
    col = pathlib.Path(args.collection)
    if not (col / "corpus.jsonl").is_file():
        print(f"no BEIR collection at {col} (corpus.jsonl missing): give its directory, or set "
              "PRIVSEARCH_SHARED to the directory holding data/cranfield")
        raise SystemExit(77)  # ctest: skipped
    doc_ids = [json.loads(line)["_id"] for line in open(col / "corpus.jsonl")]
    qrels = {}
    with open(col / "qrels" / "test.tsv") as f:
        for row in list(csv.reader(f, delimiter="\t"))[1:]:
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries = [q for q in map(json.loads, open(col / "queries.jsonl")) if q["_id"] in qrels]
    if args.queries:
        queries = queries[:args.queries]

    with tempfile.TemporaryDirectory() as work:
        t0 = time.time()
        info = privsearch.build_index_from_collection(f"{work}/index", col)
        print(f"indexed {info['documents']} documents of {col.name} in {time.time() - t0:.1f} s")
        with privsearch.Provider(f"{work}/index") as provider:
            client = provider.client()
            scores, t0 = [], time.time()
            for q in queries:
                try:
                    ids, _ = client.search_text(q["text"], k=100, top=10)
                except privsearch.InvalidArgumentError:  # no term the encoder knows
                    scores.append(0.0)
                    continue
                scores.append(ndcg_at_10([doc_ids[i] for i in ids], qrels[q["_id"]]))
            ms = 1000 * (time.time() - t0) / max(1, len(queries))
    print(f"{len(queries)} queries: nDCG@10 {sum(scores) / len(scores):.4f} (encrypted path), "
          f"{ms:.1f} ms per private search")


if __name__ == "__main__":
    main()
