#!/usr/bin/env python3
"""The floors of src/ and the paths the docs name.

src/ is built in floors, each of which may include only itself and the floors below it:

    src/core        0  pure C++, no Postgres header
    src/pg/base     1  the Postgres headers, the boundary rule, the words of a claim
    src/pg/store    2  the lock manager's façade, the claims table, the registry
    src/pg/xact     3  what happens when a transaction, a subtransaction or the session ends
    src/pg/claim    4  the claim sequence, the line, the deadlock check, leases by id, views
    src/pg/sql      5  the SQL-callable shims and _PG_init

Checks, each printed as one "ok:" or "FAILED:" line, then one summary line
"src-floors: N passed, N failed":
  1. every #include "..." of a file in src/ names a file that exists, on its own floor or below;
  2. no module-level include cycle (a module is x.hpp with x.cpp), within a floor either;
  3. every path of the tree named in a comment of src/, or in CONTRIBUTING.md and src/README.md,
     exists (a path: something/with/slashes.ext, found from the tree's top, from src/, from
     src/pg/ or from the naming file's folder; or a bare x.cpp / x.hpp file name, which must then
     exist somewhere in the tree). Patterns (NN_name.sql, *_functions.cpp) are not paths.
`--self-test` runs the checks over planted trees and exits 2 unless each plant is found.
"""
import os
import re
import sys
import tempfile

FLOORS = ["src/core", "src/pg/base", "src/pg/store", "src/pg/xact", "src/pg/claim", "src/pg/sql"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Paths named in prose: at least one slash and a file ending, or a bare C++ file name.
PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.(?:cpp|hpp|sql|spec|pl|py|sh|md|out|json))\b")
BARE = re.compile(r"(?<![\w./-])([\w-]+\.(?:cpp|hpp))\b")


def floor_of(path):
    best = None
    for i, f in enumerate(FLOORS):
        if path == f or path.startswith(f + "/"):
            best = i
    return best


def source_files(root):
    out = []
    for d, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            if n.endswith((".cpp", ".hpp")):
                out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def check_includes(root, files):
    problems = []
    graph = {}
    for f in files:
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        mine = floor_of(os.path.dirname(f))
        module = os.path.splitext(f)[0]
        for inc in INCLUDE.findall(text):
            target = os.path.join("src", inc)
            if not os.path.exists(os.path.join(root, target)):
                if inc.startswith(("core/", "pg/")):
                    problems.append("%s includes %s, which does not exist" % (f, inc))
                continue  # a Postgres or system header
            theirs = floor_of(os.path.dirname(target))
            if mine is None or theirs is None:
                problems.append("%s or %s is in no floor" % (f, target))
            elif theirs > mine:
                problems.append("%s (floor %s) includes %s, a floor up (%s)"
                                % (f, FLOORS[mine], inc, FLOORS[theirs]))
            other = os.path.splitext(target)[0]
            if other != module:
                graph.setdefault(module, set()).add(other)
    return problems, graph


def cycles(graph):
    found, done = [], set()

    def visit(v, path):
        if v in path:
            found.append(" -> ".join(path[path.index(v):] + [v]))
            return
        if v in done:
            return
        path.append(v)
        for w in sorted(graph.get(v, ())):
            visit(w, path)
        path.pop()
        done.add(v)

    for v in sorted(graph):
        visit(v, [])
    return found


def named_paths(root, files):
    """(where, path) for every path named in comments of src/ and in the docs."""
    prose = []
    for f in files:
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        prose.append((f, "\n".join(re.findall(r"//[^\n]*", text))))
    for doc in ("CONTRIBUTING.md", "src/README.md"):
        if os.path.exists(os.path.join(root, doc)):
            prose.append((doc, open(os.path.join(root, doc), encoding="utf-8").read()))
    out = []
    for where, text in prose:
        out += [(where, p) for p in PATH.findall(text)]
        out += [(where, p) for p in BARE.findall(text)]
    return out


def is_pattern(path):
    name = os.path.basename(path)
    return name.startswith("_") or "NN" in path or name.startswith("name.") or "/name." in path


def path_exists(root, where, path):
    if "/" not in path:
        for _, _, names in os.walk(root):
            if path in names:
                return True
        return False
    bases = [root, os.path.join(root, "src"), os.path.join(root, "src", "pg"),
             os.path.dirname(os.path.join(root, where))]
    return any(os.path.exists(os.path.join(b, path)) for b in bases)


def check_paths(root, files):
    problems = []
    for where, p in named_paths(root, files):
        if is_pattern(p) or p.startswith(("../", "/")):
            continue
        if not path_exists(root, where, p):
            problems.append("%s names %s, which does not exist" % (where, p))
    return sorted(set(problems))


def run(root, quiet=False):
    files = source_files(root)
    results = []
    problems, graph = check_includes(root, files)
    results.append(("every include names a file on its own floor or below", problems))
    results.append(("no module-level include cycle in src/", cycles(graph)))
    results.append(("every path named in comments, CONTRIBUTING.md and src/README.md exists",
                    check_paths(root, files)))
    passed = failed = 0
    for what, found in results:
        if found:
            failed += 1
            if not quiet:
                for p in found:
                    print("   " + p)
                print("FAILED: " + what)
        else:
            passed += 1
            if not quiet:
                print("ok: " + what)
    return passed, failed


def self_test():
    """Each plant must make its check fail; the untouched copy must pass."""
    plants = [
        ("src/pg/base/up.hpp", '#pragma once\n#include "pg/sql/shim.hpp"\n'),
        ("src/pg/store/a.hpp", '#pragma once\n#include "pg/store/b.hpp"\n'),
        ("src/pg/store/b.hpp", '#pragma once\n#include "pg/store/a.hpp"\n'),
        ("src/pg/claim/c.cpp", "// see pg/claim/nowhere.cpp for why\n"),
    ]
    with tempfile.TemporaryDirectory() as root:
        for floor in FLOORS:
            os.makedirs(os.path.join(root, floor), exist_ok=True)
        open(os.path.join(root, "src/pg/sql/shim.hpp"), "w").write("#pragma once\n")
        if run(root, quiet=True) != (3, 0):
            return False
        for path, text in plants:
            open(os.path.join(root, path), "w").write(text)
        return run(root, quiet=True) == (0, 3)


def main():
    if "--self-test" in sys.argv:
        ok = self_test()
        print(("ok" if ok else "FAILED") + ": the floor checks find an upward include, a cycle "
              "and a missing path planted in a scratch tree")
        sys.exit(0 if ok else 2)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    passed, failed = run(root)
    print("src-floors: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
