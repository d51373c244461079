#!/usr/bin/env python3
"""Check that the export list, the public header and the shared library agree.

Three sets of names must be equal:
  1. the names in the version script (lib/fastfb.sym, all its nodes);
  2. the functions declared with FFB_API in include/fastfb.h;
  3. the ffb* symbols the built shared library exports (nm -D --defined-only).

Also checked: every function declared in the header carries FFB_API, and the
version script names each symbol explicitly (no wildcard in global:, which
would also match the internal ffb__ names) and ends in `local: *;`.

Usage: test_symbols.py --sym FILE --header FILE --lib FILE [--nm PROGRAM]
Exits 0 when everything agrees, 1 with a readable diff otherwise, and 77
(meson's "skipped") only when nm is not available.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# Symbols the linker defines in every shared object; not part of our API.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def strip_c_comments(text):
    """Remove /* */ and // comments, keeping line breaks and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch for ch in text[i:j] if ch == "\n"))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_preprocessor(text):
    """Remove preprocessor directives, including their continuation lines."""
    lines = text.split("\n")
    keep, cont = [], False
    for line in lines:
        is_pp = cont or line.lstrip().startswith("#")
        cont = is_pp and line.rstrip().endswith("\\")
        keep.append("" if is_pp else line)
    return "\n".join(keep)


def header_functions(path, errors):
    with open(path, encoding="utf-8") as f:
        text = drop_preprocessor(strip_c_comments(f.read()))
    names = set()
    # Split into top-level statements; a declaration ends at ';', and
    # braces end struct/enum bodies and the extern "C" block.
    for stmt in re.split(r"[;{}]", text):
        m = re.search(r"\b(ffb_\w+)\s*\(", stmt)
        if not m or re.search(r"\btypedef\b", stmt):
            continue
        if stmt[:m.start()].rstrip().endswith("(*"):
            continue  # a function-pointer member, not a function
        if not re.search(r"\bFFB_API\b", stmt):
            line = " ".join(stmt.split())
            errors.append("%s: %s is declared without FFB_API: %s"
                          % (path, m.group(1), line))
            continue
        names.add(m.group(1))
    return names


def version_script_names(path, errors):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    # The first node (FASTFB_0) ends in `local: *;`; each later node
    # (FASTFB_0.2, ... docs/abi.md) has only `global:` and inherits it.
    if not re.search(r"\bglobal\s*:(.*?)\blocal\s*:\s*\*\s*;", text,
                     flags=re.S):
        errors.append("%s: expected a first node with 'global:' ... "
                      "'local: *;'" % path)
        return set()
    bodies = re.findall(r"\bglobal\s*:(.*?)(?:\blocal\s*:\s*\*\s*;|\})",
                        text, flags=re.S)
    names = set()
    for item in ";".join(bodies).split(";"):
        item = item.strip()
        if not item:
            continue
        if re.search(r"[*?\[\]]", item):
            errors.append("%s: wildcard '%s' in global: name every public "
                          "function explicitly (a pattern would also export "
                          "the internal ffb__ symbols)" % (path, item))
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", item):
            errors.append("%s: not a symbol name: '%s'" % (path, item))
            continue
        names.add(item)
    return names


def library_exports(nm, lib, errors):
    res = subprocess.run([nm, "-D", "--defined-only", lib],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    if res.returncode != 0:
        errors.append("%s -D --defined-only %s failed: %s"
                      % (nm, lib, res.stderr.strip()))
        return set(), set()
    ours, other = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        name = name.split("@")[0]  # ffb_version@@FASTFB_0
        if kind == "A" or name in LINKER_SYMBOLS:
            continue  # the version node itself, linker-defined symbols
        (ours if name.startswith("ffb") else other).add(name)
    return ours, other


def diff(label_a, a, label_b, b):
    lines = []
    for name in sorted(a - b):
        lines.append("  %-32s in %s, missing from %s" % (name, label_a, label_b))
    for name in sorted(b - a):
        lines.append("  %-32s in %s, missing from %s" % (name, label_b, label_a))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sym", required=True)
    ap.add_argument("--header", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--nm", default="")
    args = ap.parse_args()

    errors = []
    sym = version_script_names(args.sym, errors)
    hdr = header_functions(args.header, errors)
    if not hdr:
        errors.append("%s: no FFB_API functions found" % args.header)

    nm = args.nm or shutil.which("nm")
    if not nm or not os.path.exists(nm):
        print("SKIP: nm not found; cannot read the exports of %s" % args.lib)
        return 77
    exported, other = library_exports(nm, args.lib, errors)

    report = []
    d = diff("lib/fastfb.sym", sym, "include/fastfb.h (FFB_API)", hdr)
    if d:
        report.append("version script and header disagree:")
        report += d
    d = diff("lib/fastfb.sym", sym, "the shared library's exports", exported)
    if d:
        report.append("version script and shared library disagree:")
        report += d
    if other:
        # Not an error: nothing but ffb* names can be exported through the
        # version script; shown so that a surprise is visible in the log.
        print("note: other exported symbols ignored: %s"
              % ", ".join(sorted(other)))

    print("%d names in %s, %d FFB_API functions in %s, %d ffb* symbols "
          "exported by %s" % (len(sym), args.sym, len(hdr), args.header,
                              len(exported), os.path.basename(args.lib)))
    if errors or report:
        for e in errors:
            print("ERROR: " + e)
        if report:
            print("ERROR: the public API lists differ (the version script is "
                  "the export list; update it together with the header):")
            for line in report:
                print(line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
