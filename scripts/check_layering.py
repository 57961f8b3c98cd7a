#!/usr/bin/env python3
"""Checks that #include edges between src/ modules only go down the layers of DESIGN.md
section 2, that same-layer modules do not include each other, and that the public CKKS library
never includes the client (secret-key) headers. Exit status 1 lists every violation."""
import pathlib
import re
import sys

# module -> (layer, modules it may include)
ALLOWED = {
    "core": {"core"},
    "ring": {"ring", "core"},
    "ckks": {"ckks", "ring", "core"},          # public CKKS library
    "ckks/client": {"ckks/client", "ckks", "ring", "core"},
    "pir/lwe": {"pir/lwe", "core"},
    "pir/paillier": {"pir/paillier", "core"},
    "pir/zippir": {"pir/zippir", "pir/lwe", "pir/paillier", "core"},
    "index": {"index", "core"},
    "rerank": {"rerank", "ckks", "ring", "index", "core"},
    "rerank/client": {"rerank/client", "rerank", "ckks/client", "ckks", "ring", "core"},
    "protocol": {"protocol", "rerank", "ckks", "ckks/client", "ring", "pir/lwe", "pir/paillier",
                 "pir/zippir", "index", "core"},
    "net": {"net", "core"},
    "server": {"server", "protocol", "net", "index", "rerank", "ckks", "ring", "core"},
    "client": {"client", "protocol", "net", "index", "rerank", "rerank/client", "ckks",
               "ckks/client", "ring", "pir/zippir", "pir/paillier", "pir/lwe", "core"},
    "eval": {"eval", "index", "rerank", "ckks", "ring", "core"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module_of(rel: str) -> str:
    parts = rel.split("/")
    if len(parts) >= 3 and "/".join(parts[:2]) in ALLOWED:
        return "/".join(parts[:2])
    return parts[0]


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent / "src"
    errors = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        rel = path.relative_to(root).as_posix()
        mod = module_of(rel)
        allowed = ALLOWED.get(mod)
        if allowed is None:
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            tmod = module_of(target)
            if tmod not in ALLOWED:
                continue  # not a src/ module header
            if tmod not in allowed:
                errors.append(f"src/{rel}:{lineno}: {mod} may not include {target} ({tmod})")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering violation(s)")
        return 1
    print("layering ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
