#!/usr/bin/env python3
"""The structs of suppressions.abignore may only grow at their end.

  extensible.py SUPPRESSIONS OLD.abi NEW.abi

abidiff (libabigail 2.2) applies "has_data_member_inserted_at = end" also
to a member inserted in the middle, so check.sh runs this as well: every
member of the baseline's struct must keep its name, offset and type, and
new members must start at or after the old size. Exit 1 on a violation.
"""
import re
import sys
import xml.etree.ElementTree as ET

supp, old_path, new_path = sys.argv[1:4]
m = re.search(r"^\s*name_regexp\s*=\s*(.+)$", open(supp, encoding="utf-8").read(), re.M)
names = re.compile(m.group(1).strip())


def load(path):
    root = ET.parse(path).getroot()
    by_id = {e.get("id"): e for e in root.iter() if e.get("id")}
    structs = {}
    for e in root.iter("class-decl"):
        if names.search(e.get("name", "")) and e.get("is-declaration-only") != "yes":
            structs[e.get("name")] = e
    return by_id, structs


def tname(by_id, tid, depth=0):
    e = by_id.get(tid)
    if e is None or depth > 20:
        return "?"
    tag = e.tag
    if tag == "pointer-type-def":
        return tname(by_id, e.get("type-id"), depth + 1) + "*"
    if tag == "qualified-type-def":
        q = " ".join(k for k in ("const", "volatile") if e.get(k) == "yes")
        return q + " " + tname(by_id, e.get("type-id"), depth + 1)
    if tag == "array-type-def":
        return "%s[%s]" % (tname(by_id, e.get("type-id"), depth + 1), e.get("size-in-bits"))
    if tag == "function-type":
        return "fn(%s)" % ",".join(tname(by_id, p.get("type-id"), depth + 1)
                                   for p in e if p.get("type-id"))
    return e.get("name", tag)


def members(by_id, e):
    out = []
    for dm in e.findall("data-member"):
        v = dm.find("var-decl")
        out.append((v.get("name"), int(dm.get("layout-offset-in-bits")),
                    tname(by_id, v.get("type-id"))))
    return out


old_ids, old = load(old_path)
new_ids, new = load(new_path)
bad = 0
for name, e in sorted(old.items()):
    if name not in new:
        continue  # a removal is abidiff's to report (not suppressed)
    om, nm = members(old_ids, e), members(new_ids, new[name])
    size = int(e.get("size-in-bits", "0"))
    if nm[:len(om)] != om:
        print("abi: struct %s: a member before its end changed:" % name)
        for a, b in zip(om, nm):
            if a != b:
                print("  was %s at bit %d (%s), now %s at bit %d (%s)" % (a + b))
                break
        bad = 1
    for n, off, t in nm[len(om):]:
        if off < size:
            print("abi: struct %s: new member %s at bit %d, inside the old size %d" % (name, n, off, size))
            bad = 1
print("abi: %d extensible structs checked" % len(old))
sys.exit(bad)
