#!/usr/bin/env python3
"""Writes a BEIR-layout collection from the package lists every Debian machine has, for
`make demo` when ../shared/data is absent.

Documents: packages from `apt-cache dumpavail` (title = package name, text = its short
description), every 3rd package in name order (about 20,000). Queries: one per debtag with 5 to
150 kept packages (up to 150 tags, in tag order): the tag's words ("game::strategy" ->
"strategy game"); relevant documents: the packages carrying the tag. A concept search: the
query words need not appear in the descriptions.
Usage: debian_corpus.py OUT_DIR
"""
import json
import os
import shutil
import subprocess
import sys


def stanzas(text):
    block = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            if block:
                yield block
            block, key = {}, None
        elif line[0] in " \t" and key:
            block[key] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            block[key] = value.strip()
    if block:
        yield block


def main():
    out = sys.argv[1]
    text = subprocess.run(["apt-cache", "dumpavail"], check=True, capture_output=True,
                          text=True).stdout
    packages = {}
    for s in stanzas(text):
        name, desc = s.get("Package"), s.get("Description")
        if name and desc and name not in packages:
            tags = [t.strip() for t in s.get("Tag", "").split(",") if "::" in t]
            packages[name] = (desc, tags)
    kept = sorted(packages)[::3]
    if len(kept) < 100:
        sys.exit("debian_corpus: too few packages in apt-cache dumpavail")
    by_tag = {}
    for name in kept:
        for tag in packages[name][1]:
            by_tag.setdefault(tag, []).append(name)
    tags = [t for t in sorted(by_tag) if 5 <= len(by_tag[t]) <= 150 and "TODO" not in t][:150]
    # Written into OUT_DIR.tmp and renamed: no partial collection is ever left at OUT_DIR.
    final, out = out, out.rstrip("/") + ".tmp"
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(out, "qrels"))
    with open(os.path.join(out, "corpus.jsonl"), "w") as f:
        for name in kept:
            f.write(json.dumps({"_id": name, "title": name, "text": packages[name][0]}) + "\n")
    with open(os.path.join(out, "queries.jsonl"), "w") as f, \
            open(os.path.join(out, "qrels", "test.tsv"), "w") as q:
        q.write("query-id\tcorpus-id\tscore\n")
        for i, tag in enumerate(tags):
            facet, _, value = tag.partition("::")
            words = value.replace("-", " ").replace("_", " ").replace(":", " ")
            f.write(json.dumps({"_id": f"t{i}", "text": f"{words} {facet}"}) + "\n")
            for name in by_tag[tag]:
                q.write(f"t{i}\t{name}\t1\n")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(out, final)
    print(f"debian_corpus: {len(kept)} packages, {len(tags)} tag queries in {final}")


if __name__ == "__main__":
    main()
