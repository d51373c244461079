#!/usr/bin/env python3
"""Man pages from the public headers' comments (docs/packaging.md).

  mangen.py pages OUTDIR VERSION include/fastfb.h include/fastfb_uv.h
      writes one section-3 page per group of calls (PAGES below) into OUTDIR
  mangen.py list
      prints the page names
  mangen.py links include/fastfb.h include/fastfb_uv.h
      prints "function page" per public function (meson installs
      man3/<function>.3 as a link to its group's page)
  mangen.py restconf OUT VERSION docs/rest.md man/ffb-rest.conf.5.in
      writes ffb-rest.conf(5): the hand-written part, then the key table of
      docs/rest.md's "Configuration" section

The headers are cut at their section rulers ("/* ---- name ---" and
"/* ==== name ===="); every section must map to a page here, so a new
section fails the build until it is given one. Doc comments, code and
section introductions are kept in the header's order; nothing is
written twice, so the pages cannot drift from the header.
"""
import os
import re
import sys

# page name, whatis summary, header section title prefixes (lower case).
PAGES = [
    ("fastfb_connections", "connections: options, connecting, database info, "
     "statistics, cancellation and timeouts, database encryption keys",
     ["version", "memory", "connection options", "connection",
      "database info", "statistics", "cancellation and timeouts",
      "database encryption keys"]),
    ("fastfb_errors", "result codes and error objects",
     ["result codes", "error objects"]),
    ("fastfb_transactions", "transactions and two-phase commit",
     ["transactions", "two-phase commit"]),
    ("fastfb_statements", "prepared statements, parameters, execution, "
     "column values, one-shot SQL, scrollable cursors, arrays",
     ["statements", "parameters", "execution", "column values",
      "one-shot sql", "scrollable cursors", "arrays"]),
    ("fastfb_blobs", "blobs", ["blobs"]),
    ("fastfb_batch", "batch DML", ["batch dml"]),
    ("fastfb_pipelining", "pipelining: queued requests, results, "
     "external I/O (byte pump)",
     ["pipelining", "bring your own i/o"]),
    ("fastfb_pool", "connection reset and the blocking connection pool",
     ["reset and connection pool"]),
    ("fastfb_events", "database events (POST_EVENT)", ["events"]),
    ("fastfb_services", "the Services API: backup, restore, statistics, "
     "users, properties, repair",
     ["services api"]),
    ("fastfb_uv", "libfastfb on a libuv loop: connections, cancellation, "
     "the asynchronous pool, events",
     ["(fastfb_uv.h)", "cancellation", "the pool", "events on the loop"]),
]

RULER = re.compile(r"^/\* (?:-{4}|={4}) (.*?)\s*(?:[-=]{3,}\s*(?:\*/)?)?$")
FUNC = re.compile(r"\b(ffb_[a-z0-9_]+)\s*\(")
SKIP = re.compile(r'^(#ifndef FASTFB|#define FASTFB_(UV_)?H|#include|#ifdef __cplusplus|'
                  r'extern "C"|}$|#endif)')


def parse(path):
    """[(section title, [(kind, lines)])], kind "doc" or "code"."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    uv = os.path.basename(path) == "fastfb_uv.h"
    sections = [("(" + os.path.basename(path) + ")", [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        m = RULER.match(line)
        if m:
            title = m.group(1).strip()
            sections.append((title, []))
            i += 1
            if not line.rstrip().endswith("*/"):
                # "/* ==== title ====" opens the section's introduction
                body = []
                while not lines[i].strip().startswith("*/"):
                    body.append(lines[i])
                    i += 1
                i += 1
                sections[-1][1].append(("doc", strip_comment(body)))
            continue
        if line.startswith("/*"):
            body = [line]
            while "*/" not in body[-1]:
                i += 1
                body.append(lines[i])
            i += 1
            sections[-1][1].append(("doc", strip_comment(body)))
            continue
        if line.strip() == "":
            i += 1
            continue
        code = []
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("/*"):
            code.append(lines[i])
            i += 1
        code = [c for c in code if not SKIP.match(c)]
        if code:
            sections[-1][1].append(("code", code))
    if not uv:
        # fastfb.h's preamble (its top comment and the FFB_API macro) is
        # the subject of fastfb(3), written by hand.
        sections = sections[1:]
    return sections


def strip_comment(body):
    out = []
    for n, l in enumerate(body):
        l = l.rstrip()
        if n == 0:
            l = re.sub(r"^/\*\*?", "", l)
        if l.endswith("*/"):
            l = l[:-2].rstrip()
        s = l.lstrip()
        if s.startswith("* ") or s == "*":
            l = s[2:] if s.startswith("* ") else ""
        elif n > 0:
            l = s  # continuation lines of "/** ..." comments
        out.append(l.rstrip() if n else l.strip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def esc(s):
    s = s.replace("\\", "\\e")
    return s


def text_line(s):
    s = esc(s)
    if s.startswith(".") or s.startswith("'"):
        s = "\\&" + s
    return s


def code_line(s):
    return text_line(s.replace("-", "\\-"))


def render_doc(lines, out):
    pre = False
    for l in lines:
        if not l.strip():
            if pre:
                out.append(".fi")
                out.append(".RE")
                pre = False
            out.append(".PP")
            continue
        if l.startswith("  ") and not pre:
            out.append(".RS 2")
            out.append(".nf")
            pre = True
        elif pre and not l.startswith("  "):
            out.append(".fi")
            out.append(".RE")
            pre = False
        if pre:
            out.append(code_line(l[2:]))
            continue
        if re.match(r"^(Round trips|Returns|Since|Ownership|Threads?|Lifetime):", l) or l.startswith("- "):
            out.append(".br")
        out.append(text_line(l))
    if pre:
        out.append(".fi")
        out.append(".RE")


def build(headers):
    """{page: [sections]} and {function: page}."""
    by_prefix = {}
    for page, _, prefixes in PAGES:
        for p in prefixes:
            by_prefix[p] = page
    pages = {p[0]: [] for p in PAGES}
    funcs = {}
    for h in headers:
        for title, items in parse(h):
            key = title.lower()
            page = None
            for p in sorted(by_prefix, key=len, reverse=True):
                if key == p or key.startswith(p + " ") or key.startswith(p + "("):
                    page = by_prefix[p]
                    break
            if page is None:
                sys.exit("mangen.py: %s: section '%s' has no man page: add it to "
                         "PAGES in man/mangen.py" % (h, title))
            pages[page].append((title, os.path.basename(h), items))
            for kind, lines in items:
                if kind != "code":
                    continue
                text = " ".join(lines)
                for decl in re.findall(r"FFB_API[^;]*;", text):
                    name = FUNC.search(decl)
                    if not name:
                        sys.exit("mangen.py: cannot name the declaration: " + decl)
                    funcs[name.group(1)] = page
    return pages, funcs


def write_pages(outdir, version, headers):
    pages, funcs = build(headers)
    for page, summary, _ in PAGES:
        names = sorted(f for f, p in funcs.items() if p == page)
        uv = page == "fastfb_uv"
        out = ['.\\" Generated by man/mangen.py from the comments of %s; do not edit.'
               % ("include/fastfb_uv.h" if uv else "include/fastfb.h"),
               '.TH %s 3 "" "libfastfb %s" "libfastfb manual"' % (page.upper(), version),
               ".nh",
               ".ad l",
               ".SH NAME",
               "%s \\- %s" % (", ".join([page] + names).replace("_", "\\_"), summary),
               ".SH SYNOPSIS",
               ".nf",
               ".B #include <%s>" % ("fastfb_uv.h" if uv else "fastfb.h"),
               ".fi",
               ".PP",
               "Compile and link with \\fI$(pkg\\-config \\-\\-cflags \\-\\-libs %s)\\fP."
               % ("fastfb\\-uv" if uv else "fastfb"),
               ".SH DESCRIPTION",
               "The declarations and their documentation as in the header, in its order."
               " Every function states its cost in round trips (see",
               ".BR fastfb (3)).",
               ]
        for title, header, items in pages[page]:
            out.append(".SS %s" % text_line(title if not title.startswith("(") else header))
            for kind, lines in items:
                if kind == "doc":
                    out.append(".PP")
                    render_doc(lines, out)
                else:
                    out.append(".PP")
                    out.append(".RS 0")
                    out.append(".nf")
                    out.append(".ft B")
                    # FFB_API is the export attribute, not part of the C a reader writes
                    out.extend(code_line(re.sub(r"^FFB_API ", "", l)) for l in lines)
                    out.append(".ft R")
                    out.append(".fi")
                    out.append(".RE")
        see = ["fastfb (3)"] + ["%s (3)" % p for p, _, _ in PAGES if p != page]
        out.append(".SH SEE ALSO")
        out.append(",\n".join(".BR " + s for s in see))
        with open(os.path.join(outdir, page + ".3"), "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")


def code_span(s):
    """Minus signs; long spans may break after / ? & | (\\: is a break point)."""
    s = s.replace("-", "\\-")
    if len(s) > 30:
        s = re.sub(r"([/?&|])", r"\1\\:", s)
    return s


def md_inline(s):
    """Markdown table cell -> roff: `code` bold, \\| a bar."""
    s = s.replace("\\|", "|")
    s = esc(s)
    s = re.sub(r"`([^`]*)`", lambda m: "\\fB" + code_span(m.group(1)) + "\\fR", s)
    s = re.sub(r"\*\*([^*]*)\*\*", r"\\fB\1\\fR", s)
    return s


def rest_keys(md):
    """[(key, default, meaning)] from the table of docs/rest.md's Configuration."""
    with open(md, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Configuration\n(.*?)^## ", text, re.S | re.M)
    if not m:
        sys.exit("mangen.py: %s has no '## Configuration' section" % md)
    rows = []
    for line in m.group(1).split("\n"):
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 3:
            sys.exit("mangen.py: %s: a configuration row without 3 cells: %s" % (md, line))
        rows.append((cells[0].strip("`"), cells[1], cells[2]))
    return rows


def write_restconf(out_path, version, md, template):
    """The template with @VERSION@ and the line @KEYS@ filled in."""
    keys = [".\\\" Generated by man/mangen.py from the table of docs/rest.md, "
            "section Configuration."]
    for key, default, meaning in rest_keys(md):
        keys.append(".TP")
        keys.append("\\fB%s\\fR (default: %s)" % (key.replace("-", "\\-"), md_inline(default)))
        keys.append(("\\&" if meaning.startswith((".", "'")) else "") + md_inline(meaning)
                    if meaning else "\\&")
    with open(template, encoding="utf-8") as f:
        page = f.read().replace("@VERSION@", version)
    if "\n@KEYS@\n" not in page:
        sys.exit("mangen.py: %s has no @KEYS@ line" % template)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(page.replace("\n@KEYS@\n", "\n" + "\n".join(keys) + "\n"))


def main(argv):
    if len(argv) >= 4 and argv[1] == "pages":
        write_pages(argv[2], argv[3], argv[4:])
    elif len(argv) >= 2 and argv[1] == "list":
        print("\n".join(p[0] for p in PAGES))
    elif len(argv) >= 3 and argv[1] == "links":
        _, funcs = build(argv[2:])
        for f in sorted(funcs):
            print(f, funcs[f])
    elif len(argv) == 6 and argv[1] == "restconf":
        write_restconf(argv[2], argv[3], argv[4], argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
