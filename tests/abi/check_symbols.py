#!/usr/bin/env python3
"""debian/*.symbols list exactly the exports of lib/*.sym (docs/abi.md).

  check_symbols.py SOURCE_ROOT

Each symbol of a version script, in its node, must be in the symbols file
of its package, and the other way round; each version node appears as
NODE@NODE; and debian/changelog's version is meson.build's. dpkg-gensymbols then fails the package build when a symbol
disappears or appears without its symbols file (DPKG_GENSYMBOLS_CHECK_LEVEL
4 in debian/rules).
"""
import os
import re
import sys

src = sys.argv[1]
bad = 0
for sym, symbols in (("lib/fastfb.sym", "debian/libfastfb0.symbols"),
                     ("lib/fastfb_uv.sym", "debian/libfastfb-uv0.symbols")):
    text = open(os.path.join(src, sym), encoding="utf-8").read()
    want = set()
    for node, body in re.findall(r"^([A-Z][A-Z0-9_.]*)\s*\{(.*?)\}", text, re.M | re.S):
        want.add("%s@%s" % (node, node))
        glob = body.split("local:")[0]
        want |= {"%s@%s" % (n, node) for n in re.findall(r"\b(ffb_[a-z0-9_]+);", glob)}
    have = set(re.findall(r"^ (\S+@\S+) ", open(os.path.join(src, symbols), encoding="utf-8").read(), re.M))
    for s in sorted(want - have):
        print("%s: %s (in %s) is missing; add it with the version that first has it" % (symbols, s, sym))
        bad = 1
    for s in sorted(have - want):
        print("%s: %s is not exported by %s" % (symbols, s, sym))
        bad = 1
    print("%s: %d symbols" % (symbols, len(have)))
# the package version follows the project's (docs/abi.md, "At a release")
version = re.search(r"^\s*version: '([^']+)'", open(os.path.join(src, "meson.build"), encoding="utf-8").read(), re.M).group(1)
first = open(os.path.join(src, "debian/changelog"), encoding="utf-8").readline()
m = re.match(r"^\S+ \(([^)]+)\)", first)
if not m or m.group(1).split("-")[0] != version:
    print("debian/changelog: the top entry is %s, meson.build says %s" % (m.group(1) if m else "?", version))
    bad = 1
sys.exit(bad)
