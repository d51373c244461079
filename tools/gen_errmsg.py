#!/usr/bin/env python3
"""Generate lib/errmsg_table.h from Firebird's message headers.

Usage:
    tools/gen_errmsg.py MSG_DIR --source "FirebirdSQL/firebird v5.0.4 (commit ...)"
                        [-o lib/errmsg_table.h]

MSG_DIR is Firebird's src/include/firebird/impl/msg directory (the one that
holds all.h). One way to get it without a work tree:

    git --git-dir=FIREBIRD.git archive v5.0.4 src/include/firebird/impl \\
        | tar -x -C /tmp/fb
    tools/gen_errmsg.py /tmp/fb/src/include/firebird/impl/msg \\
        --source "FirebirdSQL/firebird v5.0.4 (commit f6d83a28c0...)"

Only facts are taken from those headers: facility, number, symbol, SQLCODE,
SQLSTATE and the highest @n argument number that the message uses. The
message texts are not copied; libfastfb's own wording lives in lib/errmsg.c.
Firebird's files are not part of this repository; only the output is.
"""

import argparse
import hashlib
import os
import re
import sys

# Fallback when msg_helper.h (next to MSG_DIR) is not available. Values from
# src/include/firebird/impl/msg_helper.h, and 01-connection.md section 11.3.
DEFAULT_FACILITIES = {
    "JRD": 0, "QLI": 1, "GFIX": 3, "GPRE": 4, "DSQL": 7, "DYN": 8,
    "INSTALL": 10, "TEST": 11, "GBAK": 12, "SQLERR": 13, "SQLWARN": 14,
    "JRD_BUGCHK": 15, "ISQL": 17, "GSEC": 18, "GSTAT": 21, "FBSVCMGR": 22,
    "UTL": 23, "NBACKUP": 24, "FBTRACEMGR": 25, "JAYBIRD": 26,
    "R2DBC_FIREBIRD": 27,
}

STR = r'"(?:[^"\\]|\\.)*"'
RE_FULL = re.compile(
    r'^FB_IMPL_MSG\(\s*(\w+)\s*,\s*(\d+)\s*,\s*([\w$]+)\s*,\s*(-?\d+)\s*,'
    r'\s*"(\w\w)"\s*,\s*"(\w\w\w)"\s*,\s*(' + STR + r')\s*\)\s*$')
RE_SYM = re.compile(
    r'^FB_IMPL_MSG_SYMBOL\(\s*(\w+)\s*,\s*(\d+)\s*,\s*([\w$]+)\s*,\s*('
    + STR + r')\s*\)\s*$')
RE_NOSYM = re.compile(
    r'^FB_IMPL_MSG_NO_SYMBOL\(\s*(\w+)\s*,\s*(\d+)\s*,\s*(' + STR
    + r')\s*\)\s*$')
RE_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
RE_FACILITY = re.compile(r'^#define\s+FB_IMPL_MSG_FACILITY_(\w+)\s+(\d+)\s*$')

# Spot checks (01-connection.md 11.3/11.4): symbol -> expected code.
KNOWN_CODES = {
    "arith_except": 335544321,
    "login": 335544472,
    "unique_key_violation": 335544665,
    "dsql_dbkey_from_non_table": 336003074,
    "dsql_error": 335544569,
    "sqlerr": 335544436,
    "random": 335544382,
    "quoted_str_miss": 335545279,
}


def die(msg):
    sys.stderr.write("gen_errmsg: " + msg + "\n")
    sys.exit(1)


def git_blob_id(data):
    """The id `git rev-parse <rev>:<path>` prints for a file's content."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def max_arg(text_literal):
    """Highest @1..@9 placeholder in a C string literal ("@@" is a literal @)."""
    body = text_literal[1:-1]
    best = 0
    i = 0
    while i < len(body):
        if body[i] == "@" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "@":
                i += 2
                continue
            if "1" <= nxt <= "9":
                best = max(best, int(nxt))
        i += 1
    return best


def load_facilities(msg_dir):
    path = os.path.join(os.path.dirname(os.path.abspath(msg_dir)),
                        "msg_helper.h")
    if not os.path.exists(path):
        return dict(DEFAULT_FACILITIES), None
    fac = {}
    with open(path, "rb") as f:
        data = f.read()
    for line in data.decode("utf-8").splitlines():
        m = RE_FACILITY.match(line)
        if m:
            fac[m.group(1)] = int(m.group(2))
    for name, num in DEFAULT_FACILITIES.items():
        if fac.get(name, num) != num:
            die("facility %s is %d in msg_helper.h, expected %d"
                % (name, fac[name], num))
    return fac, ("msg_helper.h", git_blob_id(data))


def parse(msg_dir):
    all_h = os.path.join(msg_dir, "all.h")
    if not os.path.exists(all_h):
        die("%s not found (pass Firebird's src/include/firebird/impl/msg)"
            % all_h)
    facilities, helper = load_facilities(msg_dir)
    files = []
    with open(all_h, "rb") as f:
        all_data = f.read()
    for line in all_data.decode("utf-8").splitlines():
        m = RE_INCLUDE.match(line)
        if m:
            files.append(m.group(1))
    if not files:
        die("no #include lines in all.h")

    inputs = [("all.h", git_blob_id(all_data))]
    entries = {}
    for name in files:
        with open(os.path.join(msg_dir, name), "rb") as f:
            data = f.read()
        inputs.append((name, git_blob_id(data)))
        for lineno, line in enumerate(data.decode("utf-8").splitlines(), 1):
            if not line.startswith("FB_IMPL_MSG"):
                continue
            m = RE_FULL.match(line)
            if m:
                fac, num, sym, sqlcode, cls, sub, text = m.groups()
                sqlcode = int(sqlcode)
                state = cls + sub
            else:
                m = RE_SYM.match(line)
                if m:
                    fac, num, sym, text = m.groups()
                else:
                    m = RE_NOSYM.match(line)
                    if not m:
                        die("%s:%d: cannot parse: %s" % (name, lineno, line))
                    fac, num, text = m.groups()
                    sym = None
                # Firebird has no SQLCODE/SQLSTATE for these (gds.cpp's
                # sql_codes[]/sql_states[] skip them): generic / none.
                sqlcode, state = -999, ""
            if fac not in facilities:
                die("%s:%d: unknown facility %s" % (name, lineno, fac))
            facno = facilities[fac]
            num = int(num)
            if facno > 0x1F or num > 0x3FFF:
                die("%s:%d: facility/number out of range" % (name, lineno))
            if not -32768 <= sqlcode <= 32767:
                die("%s:%d: SQLCODE %d does not fit int16_t"
                    % (name, lineno, sqlcode))
            code = 0x14000000 | (facno << 16) | num
            if code in entries:
                die("%s:%d: duplicate code %d" % (name, lineno, code))
            entries[code] = (fac, num, sym, sqlcode, state, max_arg(text))
    if helper:
        inputs.append(("../msg_helper.h", helper[1]))

    by_sym = {}
    for code, e in entries.items():
        if e[2] is not None:
            if e[2] in by_sym:
                die("duplicate symbol %s" % e[2])
            by_sym[e[2]] = code
    for sym, expected in KNOWN_CODES.items():
        if by_sym.get(sym) != expected:
            die("spot check failed: %s is %s, expected %d"
                % (sym, by_sym.get(sym), expected))
    return entries, inputs


def has_macro(sym):
    """Symbols such as rdb$triggers_rdb$flags_corrupt are not C11 names."""
    return sym is not None and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", sym)


def render(entries, inputs, source):
    out = []
    w = out.append
    w("/*")
    w(" * lib/errmsg_table.h -- GENERATED by tools/gen_errmsg.py; do not edit.")
    w(" *")
    w(" * Facts per Firebird status code: symbol (without the isc_ prefix),")
    w(" * SQLCODE, SQLSTATE, and the highest @n argument the message uses.")
    w(" * Source: " + source)
    w(" *   src/include/firebird/impl/msg/<file>  (git blob id):")
    for name, blob in inputs:
        w(" *     %-18s %s" % (name, blob))
    w(" * The message texts were NOT copied; libfastfb's own wording is in")
    w(" * lib/errmsg.c. Entries declared without SQLCODE/SQLSTATE in Firebird")
    w(" * (FB_IMPL_MSG_SYMBOL, FB_IMPL_MSG_NO_SYMBOL) get -999 and \"\".")
    w(" * code = 0x14000000 | (facility << 16) | number")
    w(" * (FB_IMPL_MSG_ENCODE in firebird/impl/msg_helper.h).")
    w(" *")
    w(" * Included only by lib/errmsg.c.")
    w(" */")
    w("")
    w("#ifndef FFB_ERRMSG_TABLE_H")
    w("#define FFB_ERRMSG_TABLE_H")
    w("")
    w('#define FFB__GDS_TABLE_SOURCE "%s"' % source.replace('"', "'"))
    w("#define FFB__GDS_TABLE_SIZE %d" % len(entries))
    w("")
    w("/* Per symbol: code, \"symbol\", sqlcode, \"sqlstate\", nargs; for")
    w(" * lib/errmsg.c's text table: { FFB__GDS_login, \"our text\" }. */")
    codes = sorted(entries)
    for code in codes:
        fac, num, sym, sqlcode, state, nargs = entries[code]
        if has_macro(sym):
            w('#define FFB__GDS_%s %du, "%s", %d, "%s", %d'
              % (sym, code, sym, sqlcode, state, nargs))
    w("")
    w("/* Sorted by code; lib/errmsg.c binary-searches it. */")
    w("static const struct ffb__gds_entry gds_facts[] = {")
    for code in codes:
        fac, num, sym, sqlcode, state, nargs = entries[code]
        if has_macro(sym):
            w("    {FFB__GDS_%s, NULL}, /* %s %d */" % (sym, fac, num))
        else:
            name = "NULL" if sym is None else '"%s"' % sym
            w('    {%du, %s, %d, "%s", %d, NULL}, /* %s %d */'
              % (code, name, sqlcode, state, nargs, fac, num))
    w("};")
    w("")
    w("#endif /* FFB_ERRMSG_TABLE_H */")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("msg_dir",
                    help="Firebird's src/include/firebird/impl/msg directory")
    ap.add_argument("--source", required=True,
                    help='where MSG_DIR came from, e.g. '
                         '"FirebirdSQL/firebird v5.0.4 (commit f6d83a2...)"')
    ap.add_argument("-o", "--output", default="lib/errmsg_table.h")
    args = ap.parse_args()
    entries, inputs = parse(args.msg_dir)
    text = render(entries, inputs, args.source)
    with open(args.output, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    sys.stderr.write("gen_errmsg: wrote %s (%d entries)\n"
                     % (args.output, len(entries)))


if __name__ == "__main__":
    main()
