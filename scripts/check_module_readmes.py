#!/usr/bin/env python3
"""Fails when a source file of a module is not listed in that module's README.md.

Every directory under src/ with a README.md documents its files in a table; a newcomer reads
that table to find where a concern lives, so a file it omits is a file nobody finds. A README
names files as `name.h/.cpp` (header and source), `name.cpp` or `name.h`.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAME = re.compile(r"([A-Za-z0-9_]+)\.(h|cpp)((?:/\.(?:h|cpp))*)")
GLOB = re.compile(r"([A-Za-z0-9_]+)\*\.")  # `dot_kernels*.{h,cpp}`: every file of that stem


def listed_files(readme_text):
    """The file names a README lists, and the stems it lists by glob."""
    names = set()
    for stem, ext, more in NAME.findall(readme_text):
        names.add(f"{stem}.{ext}")
        for extra in re.findall(r"/\.(h|cpp)", more):
            names.add(f"{stem}.{extra}")
    return names, set(GLOB.findall(readme_text))


def module_sources(module_dir):
    """The module's files, with those of its subdirectories that have no README of their own."""
    for path in sorted(module_dir.iterdir()):
        if path.is_dir() and not (path / "README.md").exists():
            yield from module_sources(path)
        elif path.suffix in (".h", ".cpp"):
            yield path


def main():
    missing = []
    for readme in sorted((ROOT / "src").rglob("README.md")):
        names, stems = listed_files(readme.read_text(encoding="utf-8"))
        for source in module_sources(readme.parent):
            by_glob = any(source.name.startswith(stem) for stem in stems)
            if source.name not in names and not by_glob:
                missing.append(source.relative_to(ROOT))
    for path in missing:
        print(f"{path}: not listed in its module's README.md", file=sys.stderr)
    if missing:
        print(f"check_module_readmes: {len(missing)} file(s) missing from their README",
              file=sys.stderr)
        return 1
    print("check_module_readmes: every source file is listed in its module's README")
    return 0


if __name__ == "__main__":
    sys.exit(main())
