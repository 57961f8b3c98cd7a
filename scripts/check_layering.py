#!/usr/bin/env python3
"""Checks that #include edges between src/ modules only go down the layers of
docs/ARCHITECTURE.md (each module lists exactly the modules it uses), that same-layer modules do not include each other, and that the public CKKS library
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
    # Hintless PIR (YPIR+SP) on the project's ring; client/ holds the secrets and decoding.
    "pir/hintless": {"pir/hintless", "pir/lwe", "ring", "core"},
    "pir/hintless/client": {"pir/hintless/client", "pir/hintless", "pir/lwe", "ring", "core"},
    "index": {"index", "core"},
    "rerank": {"rerank", "ckks", "core"},
    "rerank/client": {"rerank/client", "rerank", "ckks/client", "ckks", "core"},
    # The provider's request handling: public CKKS only (never ckks/client).
    "protocol": {"protocol", "rerank", "ckks", "pir/zippir", "pir/hintless", "pir/lwe", "scoring",
                 "index", "core"},
    "net": {"net", "core"},
    "server": {"server", "protocol", "net", "core"},
    # The client core: what every client (native, WebAssembly) shares; no protocol (protobuf),
    # no net.
    "client/core": {"client/core", "index", "version", "rerank", "rerank/client", "ckks",
                    "ckks/client", "pir/hintless", "pir/hintless/client", "pir/lwe", "scoring",
                    "scoring/client", "core"},
    "client": {"client", "client/core", "protocol", "net", "index", "version", "rerank", "rerank/client", "ckks",
               "ckks/client", "pir/zippir", "pir/hintless", "pir/hintless/client", "pir/lwe",
               "scoring", "scoring/client", "core"},
    "eval": {"eval", "index", "core"},
    # Access-private scoring: the cluster-major LWE database and, in client/, the query side.
    "scoring": {"scoring", "pir/lwe", "index", "core"},
    "scoring/client": {"scoring/client", "scoring", "pir/lwe", "index", "core"},
    # One index version opened once: manifest, trust, hashes, views merged over generations.
    "version": {"version", "scoring", "index", "core"},
}
# Kernel-level headers of the CKKS library: only the library itself (and its client half) may
# include them; every other module goes through the public ckks headers.
INTERNAL = {"ckks/internal/": {"ckks", "ckks/client"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module_of(rel: str) -> str:
    parts = rel.split("/")
    if len(parts) >= 4 and "/".join(parts[:3]) in ALLOWED:
        return "/".join(parts[:3])
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
            for prefix, owners in INTERNAL.items():
                if target.startswith(prefix) and mod not in owners:
                    errors.append(f"src/{rel}:{lineno}: {target} is internal to {prefix[:-1]}")
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering violation(s)")
        return 1
    print("layering ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
