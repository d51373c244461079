#!/usr/bin/env python3
"""Generate lib/tz_table.h and lib/charset_table.h from Firebird's sources.

Usage (from a bare clone or mirror of FirebirdSQL/firebird):

    tools/gen_tz_table.py --git-dir FIREBIRD.git --rev v5.0.4 \\
        [--tz-out lib/tz_table.h] [--charset-out lib/charset_table.h]

or from loose copies of the two input files:

    tools/gen_tz_table.py --timezones TimeZones.h --intl IntlManager.cpp \\
        --source "FirebirdSQL/firebird v5.0.4 (commit ...)"

Inputs:
  src/common/TimeZones.h     BUILTIN_TIME_ZONE_LIST: the region names; the
                             index in that list gives the zone id,
                             id = 65535 - index (TimeZoneUtil.cpp,
                             getId: MAX_USHORT - index).
  src/jrd/IntlManager.cpp    defaultCharSets[] (name, id, max bytes per
                             character: what RDB$CHARACTER_SETS holds) and
                             defaultCharSetAliases[]. Entries inside
                             #ifdef FB_NEW_INTL_ALLOW_NOT_READY (UTF16,
                             UTF32) are not built into the server and are
                             skipped.
  src/intl/charsets.h        the CS_* id macros those tables use.

Only facts are taken (names, ids, byte counts); Firebird's files are not
part of this repository, only the generated headers are.
"""

import argparse
import hashlib
import re
import subprocess
import sys

TZ_PATH = "src/common/TimeZones.h"
INTL_PATH = "src/jrd/IntlManager.cpp"
CS_PATH = "src/intl/charsets.h"

# Spot checks: docs/protocol/02-statements.md 9.4 and 10.2 (observed ids).
KNOWN_ZONES = {
    "GMT": 65535,
    "Europe/Prague": 65059,
    "Etc/UTC": 65100,
    "UTC": 64909,
    "America/New_York": 65361,
}
# 02-statements.md 10.4 (id, max bytes per character).
KNOWN_CHARSETS = {
    "NONE": (0, 1), "OCTETS": (1, 1), "ASCII": (2, 1),
    "UNICODE_FSS": (3, 3), "UTF8": (4, 4), "SJIS_0208": (5, 2),
    "EUCJ_0208": (6, 2), "DOS437": (10, 1), "ISO8859_1": (21, 1),
    "WIN1250": (51, 1), "WIN1252": (53, 1), "GB18030": (69, 4),
}


def die(msg):
    sys.stderr.write("gen_tz_table: " + msg + "\n")
    sys.exit(1)


def git_blob_id(data):
    """The id `git rev-parse <rev>:<path>` prints for a file's content."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir=" + git_dir] + list(args),
                          check=True, stdout=subprocess.PIPE).stdout


def c_string(s):
    if not re.match(r"^[\x20-\x7e]*$", s) or '"' in s or "\\" in s:
        die("unexpected characters in name %r" % s)
    return '"' + s + '"'


RE_ZONE = re.compile(r'^\s*"([^"]+)"\s*,?\s*//\s*fb_tzid_\w+\s*-\s*(\d+)\s*$')


def parse_zones(text):
    m = re.search(r"BUILTIN_TIME_ZONE_LIST\[\]\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        die("BUILTIN_TIME_ZONE_LIST not found")
    names = []
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        z = RE_ZONE.match(line)
        if not z:
            die("cannot parse zone line: %r" % line)
        name, comment_id = z.group(1), int(z.group(2))
        if comment_id != 65535 - len(names):
            die("%s: comment says id %d, position gives %d"
                % (name, comment_id, 65535 - len(names)))
        names.append(name)
    lower = [n.lower() for n in names]
    if len(set(lower)) != len(lower):
        die("zone names are not unique ignoring case")
    # Ids 0..2878 are offsets; the named range must stay above them.
    if 65535 - (len(names) - 1) <= 2878:
        die("too many zones")
    for name, zid in KNOWN_ZONES.items():
        if name not in names or 65535 - names.index(name) != zid:
            die("spot check failed: %s should be %d" % (name, zid))
    version = re.search(r'BUILTIN_TIME_ZONE_VERSION\s*=\s*"([^"]+)"', text)
    return names, version.group(1) if version else "?"


def parse_cs_macros(text):
    macros = {}
    for m in re.finditer(r"^#define\s+(CS_\w+)\s+(\d+)", text, re.M):
        macros[m.group(1)] = int(m.group(2))
    return macros


def strip_not_ready(body):
    """Drop the #ifdef FB_NEW_INTL_ALLOW_NOT_READY ... #endif blocks."""
    out = []
    skip = 0
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("#ifdef FB_NEW_INTL_ALLOW_NOT_READY"):
            skip += 1
            continue
        if skip and s.startswith("#endif"):
            skip -= 1
            continue
        if s.startswith("#"):
            die("unexpected preprocessor line in table: %r" % line)
        if not skip:
            out.append(line)
    return "\n".join(out)


def parse_charsets(intl_text, macros):
    m = re.search(r"defaultCharSets\[\]\s*=\s*\{(.*?)\n\};", intl_text, re.S)
    if not m:
        die("defaultCharSets not found")
    sets = []
    for e in re.finditer(r'\{\s*"(\w+)"\s*,\s*(CS_\w+)\s*,\s*(\d+)\s*\}',
                         strip_not_ready(m.group(1))):
        name, macro, nbytes = e.group(1), e.group(2), int(e.group(3))
        if macro not in macros:
            die("unknown macro " + macro)
        sets.append((macros[macro], name, nbytes))
    m = re.search(r"defaultCharSetAliases\[\]\s*=\s*\{(.*?)\n\};", intl_text,
                  re.S)
    if not m:
        die("defaultCharSetAliases not found")
    aliases = []
    for e in re.finditer(r'\{\s*"([\w-]+)"\s*,\s*(CS_\w+)\s*\}',
                         strip_not_ready(m.group(1))):
        name, macro = e.group(1), e.group(2)
        if macro not in macros:
            die("unknown macro " + macro)
        aliases.append((name, macros[macro]))
    ids = [s[0] for s in sets]
    if len(set(ids)) != len(ids):
        die("duplicate charset id")
    known_ids = set(ids)
    for name, cid in aliases:
        if cid not in known_ids:
            die("alias %s for an unknown id %d" % (name, cid))
    by_name = {s[1]: (s[0], s[2]) for s in sets}
    for name, facts in KNOWN_CHARSETS.items():
        if by_name.get(name) != facts:
            die("spot check failed: %s should be %r, is %r"
                % (name, facts, by_name.get(name)))
    all_names = [s[1].upper() for s in sets] + [a[0].upper() for a in aliases]
    if len(set(all_names)) != len(all_names):
        die("charset names/aliases are not unique")
    return sorted(sets), aliases


def header(out, fname, what, source, inputs):
    w = out.append
    w("/*")
    w(" * %s -- GENERATED by tools/gen_tz_table.py; do not edit." % fname)
    w(" *")
    for line in what:
        w(" * " + line if line else " *")
    w(" * Source: " + source)
    for path, blob in inputs:
        w(" *   %-28s (git blob %s)" % (path, blob))
    w(" * Only names and numbers are taken from those files.")
    w(" */")


def render_tz(names, tzversion, source, inputs):
    out = []
    header(out, "lib/tz_table.h", [
        "Firebird's named time zones (BUILTIN_TIME_ZONE_LIST, zone data "
        + tzversion + ").",
        "The id of ffb__tz_names[i] is 65535 - i; ids never change",
        "between Firebird versions, new zones are appended.",
    ], source, inputs)
    w = out.append
    w("#ifndef FFB_LIB_TZ_TABLE_H")
    w("#define FFB_LIB_TZ_TABLE_H")
    w("")
    w("#define FFB__TZ_NAMED_COUNT %d" % len(names))
    w("")
    w("static const char *const ffb__tz_names[FFB__TZ_NAMED_COUNT] = {")
    for i, n in enumerate(names):
        w("    %s, /* %d */" % (c_string(n), 65535 - i))
    w("};")
    w("")
    w("#endif")
    return "\n".join(out) + "\n"


def render_cs(sets, aliases, source, inputs):
    out = []
    header(out, "lib/charset_table.h", [
        "Firebird character sets as RDB$CHARACTER_SETS holds them: id,",
        "name, maximum bytes per character (IntlManager defaultCharSets),",
        "sorted by id; then the alternative names the server accepts",
        "(defaultCharSetAliases).",
    ], source, inputs)
    w = out.append
    w("#ifndef FFB_LIB_CHARSET_TABLE_H")
    w("#define FFB_LIB_CHARSET_TABLE_H")
    w("")
    w("static const struct ffb__charset_def {")
    w("    unsigned char id;")
    w("    unsigned char max_bytes;")
    w("    const char *name;")
    w("} ffb__charsets[] = {")
    for cid, name, nbytes in sets:
        w("    {%d, %d, %s}," % (cid, nbytes, c_string(name)))
    w("};")
    w("")
    w("static const struct ffb__charset_alias {")
    w("    unsigned char id;")
    w("    const char *name;")
    w("} ffb__charset_aliases[] = {")
    for name, cid in aliases:
        w("    {%d, %s}," % (cid, c_string(name)))
    w("};")
    w("")
    w("#endif")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", help="Firebird git directory")
    ap.add_argument("--rev", help="tag or commit, e.g. v5.0.4")
    ap.add_argument("--timezones", help="a copy of " + TZ_PATH)
    ap.add_argument("--intl", help="a copy of " + INTL_PATH)
    ap.add_argument("--charsets-h", help="a copy of " + CS_PATH)
    ap.add_argument("--source", help="provenance line (files mode)")
    ap.add_argument("--tz-out", default="lib/tz_table.h")
    ap.add_argument("--charset-out", default="lib/charset_table.h")
    args = ap.parse_args()

    if args.git_dir:
        if not args.rev:
            die("--git-dir needs --rev")
        commit = git(args.git_dir, "rev-parse",
                     args.rev + "^{commit}").decode().strip()
        data = {p: git(args.git_dir, "show", commit + ":" + p)
                for p in (TZ_PATH, INTL_PATH, CS_PATH)}
        source = "FirebirdSQL/firebird %s (commit %s)" % (args.rev, commit)
    else:
        if not (args.timezones and args.intl and args.charsets_h
                and args.source):
            die("give --git-dir/--rev, or all of --timezones, --intl, "
                "--charsets-h and --source")
        data = {}
        for p, f in ((TZ_PATH, args.timezones), (INTL_PATH, args.intl),
                     (CS_PATH, args.charsets_h)):
            with open(f, "rb") as fh:
                data[p] = fh.read()
        source = args.source

    names, tzversion = parse_zones(data[TZ_PATH].decode("utf-8"))
    macros = parse_cs_macros(data[CS_PATH].decode("utf-8"))
    sets, aliases = parse_charsets(data[INTL_PATH].decode("utf-8"), macros)

    tz = render_tz(names, tzversion, source,
                   [(TZ_PATH, git_blob_id(data[TZ_PATH]))])
    cs = render_cs(sets, aliases, source,
                   [(INTL_PATH, git_blob_id(data[INTL_PATH])),
                    (CS_PATH, git_blob_id(data[CS_PATH]))])
    with open(args.tz_out, "w") as f:
        f.write(tz)
    with open(args.charset_out, "w") as f:
        f.write(cs)
    print("%s: %d zones; %s: %d charsets, %d aliases"
          % (args.tz_out, len(names), args.charset_out, len(sets),
             len(aliases)))


if __name__ == "__main__":
    main()
