#!/usr/bin/env python3
"""Checks that engine/ reads bottom-up: a file may include headers of its own folder or of folders on a lower floor,
never of a folder on its own floor or above. Also: the engine includes nothing from views/ or app/ and no Qt header,
and views/ includes nothing from app/. Prints every include that runs the wrong way and exits 1 when there is one.

The floors (bottom first) are the map of docs/ARCHITECTURE.md; a new engine folder must be given a floor here.

usage: scripts/check_floors.py [REPO_ROOT]
"""
import os
import re
import sys

# Bottom first. Folders on one line share a floor and may not include each other.
FLOORS = [
    ["util"],
    ["ir"],
    ["options"],
    ["schedule"],
    ["memory"],
    ["kernels"],
    ["io"],
    ["passes"],
    ["fusion"],
    ["pipeline", "plugin"],
    ["history"],
    ["emulator"],
    ["layout", "samples"],
    ["report"],
    ["variants"],
    ["batch"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def floor_of(folder):
    for i, names in enumerate(FLOORS):
        if folder in names:
            return i
    return None


def includes(path):
    """(line number, line, match) for each #include of a source file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield lineno, line, m


def front_end_includes(repo, folder, above, qt_allowed):
    """Includes of `folder`'s sources that reach into the folders in `above` (or Qt, unless allowed)."""
    root = os.path.join(repo, folder)
    if not os.path.isdir(root):
        return []
    headers = {f for d in above for _, _, fs in os.walk(os.path.join(repo, d)) for f in fs if f.endswith(".h")}
    found = []
    for path in sources(root):
        for lineno, _, m in includes(path):
            name = m.group(2)
            if (not qt_allowed and name.startswith("Q")) or (
                    m.group(1) == '"' and os.path.basename(name) in headers and
                    not os.path.exists(os.path.join(root, name))):
                found.append(f"{os.path.relpath(path, repo)}:{lineno}: {folder}/ includes {name}, which it "
                             f"must not ({folder}/ stands below {', '.join(d + '/' for d in above)})")
    return found


def sources(root):
    for base, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith((".h", ".cpp")):
                yield os.path.join(base, f)


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    engine = os.path.join(repo, "engine")
    problems = []
    folders = sorted(d for d in os.listdir(engine) if os.path.isdir(os.path.join(engine, d)))
    for d in folders:
        if floor_of(d) is None:
            problems.append(f"engine/{d}/: folder has no floor in scripts/check_floors.py")
    for path in sources(engine):
        rel = os.path.relpath(path, repo)
        own = rel.split(os.sep)[1]
        own_floor = floor_of(own)
        for lineno, line, m in includes(path):
            header = m.group(2)
            top = header.split("/")[0]
            where = f"{rel}:{lineno}: #include {line.strip().split(None, 1)[1] if line.strip().startswith('#include') else header}"
            if top.startswith("Q") and m.group(1) == "<":
                problems.append(f"{where}: the engine has no Qt")
                continue
            if m.group(1) != '"' or "/" not in header or top == own:
                continue
            if top in ("views", "app") or header.endswith(("graph_canvas.h", "main_window.h")):
                problems.append(f"{where}: the engine does not include the GUI")
                continue
            target = floor_of(top)
            if target is None or own_floor is None:
                continue  # a third-party path ("onnx/...") or a folder reported above
            if target >= own_floor:
                rel_word = "the same floor as" if target == own_floor else "a floor above"
                problems.append(f"{where}: {top}/ is on {rel_word} {own}/")
    # Front ends above the engine: views/ includes nothing from app/; the Python module stands on the engine alone
    # (no Qt, nothing from views/ or app/).
    problems += front_end_includes(repo, "views", ("app",), qt_allowed=True)
    problems += front_end_includes(repo, "python", ("app", "views"), qt_allowed=False)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) run against the floors (bottom first: "
              + " < ".join("/".join(f) for f in FLOORS) + ")")
        return 1
    print(f"engine floors hold: {sum(1 for _ in sources(engine))} files, {len(folders)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
