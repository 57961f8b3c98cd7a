#!/usr/bin/env python3
"""Fails when a C++ file is not formatted as .clang-format says (Google style, 100 columns).

Runs clang-format-14 (the version scripts/setup.sh installs: another version formats some
constructs differently, so the check pins it) in dry-run mode over every .h/.cpp of the
repository outside build directories. Fix with
`git ls-files '*.cpp' '*.h' | xargs clang-format-14 -i`.
"""
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DIRS = ("src", "tools", "tests", "fuzz", "python", "examples")


def main():
    clang_format = shutil.which("clang-format-14")
    if clang_format is None:
        print("check_format: clang-format-14 is not installed (scripts/setup.sh)", file=sys.stderr)
        return 1
    files = [str(p) for top in DIRS for p in sorted((ROOT / top).rglob("*"))
             if p.suffix in (".h", ".cpp") and "build" not in p.relative_to(ROOT).parts]
    result = subprocess.run([clang_format, "--dry-run", "--Werror", *files],
                            capture_output=True, text=True)
    unformatted = sorted({line.split(":", 1)[0] for line in result.stderr.splitlines()
                          if ": error:" in line})
    for path in unformatted:
        print(f"{pathlib.Path(path).relative_to(ROOT)}: not clang-formatted", file=sys.stderr)
    if result.returncode != 0:
        print(f"check_format: {len(unformatted)} of {len(files)} files need clang-format-14 -i",
              file=sys.stderr)
        return 1
    print(f"check_format: {len(files)} files formatted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
