#!/usr/bin/env python3
"""Fails when a function in src/ or tools/ runs past 80 lines or a source file past 500.

STYLE.md: small files with one concern, functions that fit on a screen. Function extents come
from Universal Ctags (`--fields=+ne`: start and end line of every function definition, free or
member, in or out of its class); lambdas count as part of the function that holds them. Tests
are exempt from the function limit (a table of cases reads best whole) but not the file limit.
"""
import json
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUNCTION_LIMIT = 80
FILE_LIMIT = 500
FUNCTION_DIRS = ("src", "tools")
FILE_DIRS = ("src", "tools", "tests", "python", "fuzz")
# Reviewed exceptions, at most three: name -> why. None today.
EXCEPTIONS = {}


def ctags_functions(paths):
    ctags = shutil.which("ctags-universal") or shutil.which("ctags")
    if ctags is None:
        sys.exit("check_function_length: universal-ctags is not installed (scripts/setup.sh)")
    out = subprocess.run(
        [ctags, "--output-format=json", "--fields=+ne", "--kinds-c++=f", "--language-force=C++",
         "-f", "-"] + [str(p) for p in paths],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("kind") == "function" and "end" in tag:
            yield tag["path"], tag["name"], tag["line"], tag["end"] - tag["line"] + 1


def sources(dirs):
    for top in dirs:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".h", ".cpp") and "build" not in path.relative_to(ROOT).parts:
                yield path


def main():
    problems = []
    for path, name, line, length in ctags_functions(list(sources(FUNCTION_DIRS))):
        if length > FUNCTION_LIMIT and name not in EXCEPTIONS:
            rel = pathlib.Path(path).resolve().relative_to(ROOT)
            problems.append(f"{rel}:{line}: {name} is {length} lines (limit {FUNCTION_LIMIT})")
    for path in sources(FILE_DIRS):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > FILE_LIMIT:
            problems.append(f"{path.relative_to(ROOT)}: {lines} lines (limit {FILE_LIMIT})")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_function_length: {len(problems)} over the limits", file=sys.stderr)
        return 1
    print(f"check_function_length: no function over {FUNCTION_LIMIT} lines, "
          f"no file over {FILE_LIMIT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
