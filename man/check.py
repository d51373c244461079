#!/usr/bin/env python3
"""meson test man (suite lint): the man pages cannot drift from the code.

  check.py SOURCE_ROOT MAN_BUILD_DIR

1. Every function exported by lib/fastfb.sym and lib/fastfb_uv.sym is named
   in the NAME line of exactly one generated section-3 page and declared in
   its body, and every function those pages name is exported.
2. Every option a tool's source accepts is described in its hand-written
   page (ffb-proxy, ffb-oltp, ffb-backup, ffb-restore, ffb-rest), and every
   hand-written page's .TH line has the version of meson.build.
3. docs/rest.md's configuration table, the generated ffb-rest.conf(5) and
   rest/config.c's rest_config_set() have the same keys.
Each failure is printed; the exit status is 1 if there was one.
"""
import glob
import os
import re
import sys

src, build = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "man"))
import mangen  # noqa: E402

errors = []


def read(*p):
    with open(os.path.join(*p), encoding="utf-8") as f:
        return f.read()


# 1. exported functions <-> generated pages
exported = set()
for sym in ("lib/fastfb.sym", "lib/fastfb_uv.sym"):
    exported |= set(re.findall(r"^\s*(ffb_[a-z0-9_]+);", read(src, sym), re.M))
named = {}
for p, _, _ in mangen.PAGES:
    path = os.path.join(build, p + ".3")
    if not os.path.exists(path):
        errors.append("%s: not generated" % path)
        continue
    text = read(path)
    m = re.search(r"^\.SH NAME\n(.*?) \\- ", text, re.M)
    names = [n.strip().replace("\\_", "_") for n in m.group(1).split(",")] if m else []
    body = text.replace("\\-", "-")
    for n in names[1:]:
        named.setdefault(n, []).append(p)
        if not re.search(r"\b%s\s*\(" % re.escape(n), body.split(".SH DESCRIPTION", 1)[-1]):
            errors.append("%s.3 names %s but does not declare it" % (p, n))
for f in sorted(exported - set(named)):
    errors.append("%s (lib/*.sym) has no man page entry: document it in the header, "
                  "in a section man/mangen.py maps to a page" % f)
for f in sorted(set(named) - exported):
    errors.append("%s is in the man pages (declared FFB_API) but not exported by lib/*.sym" % f)
for f, ps in sorted(named.items()):
    if len(ps) > 1:
        errors.append("%s is named by several pages: %s" % (f, ", ".join(ps)))

# 2. tool options <-> hand-written pages
def page_opts(page):
    t = read(src, "man", page).replace("\\-", "-")
    return set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", t))


def need(page, opts, where):
    have = page_opts(page)
    if not opts:
        errors.append("%s: no options found in %s (has its parsing moved?)" % (page, where))
    for o in sorted(opts - have):
        errors.append("%s does not describe %s (accepted by %s)" % (page, o, where))


proxy = read(src, "bench/proxy.c")
usage = re.search(r"static void usage\(FILE \*f\) \{(.*?)\n\}", proxy, re.S)
need("ffb-proxy.1", set(re.findall(r'"\s*(--[a-z][a-z0-9-]*)', usage.group(1) if usage else "")),
     "bench/proxy.c usage()")
oltp = read(src, "bench/oltp/oltp.c")
need("ffb-oltp.1", {"--" + k for k in re.findall(r'\b[IBS]\("([a-z0-9-]+)",', oltp)},
     "bench/oltp/oltp.c set_opt()")
tool = read(src, "tools/tool.h")
common = set(re.findall(r'strcmp\(a, "(-[a-z])"\) == 0', tool))
need("ffb-backup.1", common, "tools/tool.h")
need("ffb-restore.1", common | set(re.findall(r'strcmp\(argv\[i\], "(-[a-z])"\)',
                                              read(src, "tools/ffb-restore.c"))),
     "tools/tool.h, tools/ffb-restore.c")
need("ffb-rest.1", set(re.findall(r'strcmp\(argv\[1\], "(--[a-z-]+)"\)', read(src, "rest/main.c"))),
     "rest/main.c")

# the hand-written pages carry the project's version (a release bumps them)
version = re.search(r"^\s*version: '([^']+)'", read(src, "meson.build"), re.M).group(1)
for page in sorted(os.listdir(os.path.join(src, "man"))):
    if re.search(r"\.[135](\.in)?$", page):
        th = re.search(r"^\.TH .*$", read(src, "man", page), re.M)
        if not th or ('"libfastfb %s"' % version) not in th.group(0).replace("@VERSION@", version):
            errors.append("man/%s: its .TH line does not say libfastfb %s" % (page, version))

# 3. configuration keys: docs/rest.md = ffb-rest.conf(5) = rest/config.c
config = read(src, "rest/config.c")
fn = re.search(r"\nint rest_config_set\(.*?\n\}", config, re.S)
code_keys = set(re.findall(r'strcmp\(key, "([a-z0-9-]+)"\) == 0', fn.group(0) if fn else ""))
code_keys |= set(re.findall(r'const char \*key = "([a-z0-9-]+)";', config))
doc_keys = {k for k, _, _ in mangen.rest_keys(os.path.join(src, "docs/rest.md"))}
if not code_keys:
    errors.append("rest/config.c: no keys found in rest_config_set() (has it moved?)")
for k in sorted(code_keys - doc_keys):
    errors.append("key %s (rest/config.c) is missing from docs/rest.md's configuration table" % k)
for k in sorted(doc_keys - code_keys):
    errors.append("key %s (docs/rest.md) is not accepted by rest/config.c" % k)
conf = os.path.join(build, "ffb-rest.conf.5")
if os.path.exists(conf):
    page_keys = set(k.replace("\\-", "-") for k in
                    re.findall(r"^\.TP\n\\fB([a-z0-9\\-]+)\\fR", read(conf), re.M))
    if page_keys != doc_keys:
        errors.append("ffb-rest.conf.5 keys differ from docs/rest.md: %s"
                      % sorted(page_keys ^ doc_keys))
elif glob.glob(os.path.join(build, "..", "rest", "ffb-rest")):
    errors.append("%s: not generated although ffb-rest is built" % conf)

for e in errors:
    print("FAIL", e)
print("%d exported functions, %d pages; %d rest keys; %d failures"
      % (len(exported), len(mangen.PAGES), len(code_keys), len(errors)))
sys.exit(1 if errors else 0)
