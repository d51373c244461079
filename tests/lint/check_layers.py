#!/usr/bin/env python3
"""The layers of lib/, checked on the built objects (which file calls which).

The engine (lib/engine.c), the blocking loop (lib/run.c), the socket
transport (lib/net.c) and the connection (lib/conn.c) may not be on a cycle
of calls between files: the engine calls nothing above it (results, inline
blobs and handshake packets go through hooks the connection installs), the
transport only feeds the byte pump, the loop only drives the transport and
the engine, and nothing calls back into the connection.

Usage: check_layers.py NM ARCHIVE (the static library of lib/ and proto/).
"""
import collections
import os
import subprocess
import sys

nm, archive = sys.argv[1], sys.argv[2]
out = subprocess.run([nm, "-A", archive], capture_output=True, text=True,
                     check=True).stdout
defs, uses = {}, collections.defaultdict(set)
for line in out.splitlines():
    # archive:member.o:  [value] type name
    head, _, rest = line.partition(".o:")
    member = os.path.basename(head.rsplit(":", 1)[-1])
    name = member.replace("lib_", "lib/", 1).replace("proto_", "proto/", 1)
    f = rest.split()
    if len(f) == 3 and f[1] in "TDRBC":
        defs[f[2]] = name
    elif len(f) == 2 and f[0] == "U":
        uses[name].add(f[1])
calls = collections.defaultdict(set)
for f, us in uses.items():
    for u in us:
        if u in defs and defs[u] != f:
            calls[f].add(defs[u])

def path(a, b):
    """A call path from a to b (list of files), or None."""
    prev, todo = {a: None}, [a]
    while todo:
        x = todo.pop()
        for y in sorted(calls[x]):
            if y == b:
                p = [x]
                while prev[p[-1]] is not None:
                    p.append(prev[p[-1]])
                return p[::-1] + [b]
            if y not in prev:
                prev[y] = x
                todo.append(y)
    return None

status = 0
files = {d for d in defs.values()}
for f in ("lib/engine.c", "lib/run.c", "lib/net.c", "lib/conn.c"):
    if f not in files:
        print(f"{f}: not in {archive}")
        status = 1
        continue
    cycle = path(f, f)
    if cycle:
        print(f"{f} is on a call cycle: {' -> '.join(cycle)}")
        status = 1
print("layer check " + ("FAILED" if status else
                        f"passed: {len(files)} files, no cycle through the "
                        "engine, the loop, the transport or the connection"))
sys.exit(status)
