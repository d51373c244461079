#!/usr/bin/env bash
# CI stage 6 (tests/run-all.sh): the Debian packages the way a user meets
# them (docs/packaging.md).
#
#   tests/packaging.sh SERVERS_ENV
#
#  1. dpkg-buildpackage -us -uc -b on a copy of the committed tree
#     (git archive HEAD: what a clean clone holds)
#  2. lintian: no error and no warning (the explained ones are overridden
#     in debian/*.lintian-overrides)
#  3. the ABI check (tests/abi/check.sh) on the package build's unstripped
#     libraries, which dpkg-buildflags builds with -g
#  4. apt-get install of the six packages; the man pages and the unit
#     checked where they were installed
#  5. examples/query.c compiled against the installed libfastfb-dev with
#     pkg-config and run against the Firebird 4.0 test server; its rows and
#     its round trips checked
#  6. the packages purged again (also when a step fails)
# Needs root (apt-get) and a git checkout. Exit status 0 when all passed.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
env_file=$1
set -a
# shellcheck disable=SC1090
. "$env_file"
set +a

SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo)
pkgs=(libfastfb0 libfastfb-dev libfastfb-uv0 libfastfb-uv-dev ffb-rest ffb-tools)
work=$(mktemp -d)
installed=0
cleanup() {
    if [ "$installed" -eq 1 ]; then
        "${SUDO[@]}" apt-get purge -y -qq "${pkgs[@]}" >/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
step() { printf -- '--- packaging: %s (%ss)\n' "$*" "$SECONDS"; }

step "dpkg-buildpackage -us -uc -b"
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
git archive --format=tar --prefix="libfastfb-$version/" HEAD | tar -x -C "$work"
(cd "$work/libfastfb-$version" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
    tail -n 60 "$work/build.log"
    echo "packaging: dpkg-buildpackage failed"
    exit 1
}
ls "$work"/*.deb

step "lintian"
# --fail-on warning: a warning not overridden (with its reason) fails
lintian --fail-on error,warning --display-info --suppress-tags mail-contact \
    "$work/libfastfb_${version}_$(dpkg --print-architecture).changes"

step "ABI against the baseline"
bash tests/abi/check.sh "$top" "$work/libfastfb-$version/obj-$(dpkg-architecture -qDEB_HOST_GNU_TYPE)"

step "apt-get install"
debs=()
for p in "${pkgs[@]}"; do
    debs+=("$work/${p}_${version}_$(dpkg --print-architecture).deb")
done
installed=1
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
dpkg-query -W "${pkgs[@]}"
# the pages a user opens: the overview, a function's link, a tool, the config
for page in fastfb.3 ffb_conn_connect.3 ffb_uv_pool_new.3 ffb-proxy.1 ffb-rest.conf.5; do
    f=$(find /usr/share/man -name "$page.gz")
    [ -n "$f" ] || { echo "packaging: man page $page not installed"; exit 1; }
    zcat "$f" >/dev/null
done
ffb-proxy --help >/dev/null
[ "$(stat -c %a /etc/ffb-rest/ffb-rest.conf)" = 600 ] ||
    { echo "packaging: /etc/ffb-rest/ffb-rest.conf is not 0600"; exit 1; }
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify /lib/systemd/system/ffb-rest.service
else
    echo "packaging: systemd-analyze not installed: the unit's syntax is not checked"
fi

step "examples/query.c against the installed libfastfb-dev, on Firebird 4.0"
# shellcheck disable=SC2046  # pkg-config's words are meant to split
cc -Wall -Werror -o "$work/query" examples/query.c $(pkg-config --cflags --libs fastfb)
# the library it loads is the package's file
lib=$(ldd "$work/query" | awk '$1 == "libfastfb.so.0" {print $3}')
dpkg -S "$(readlink -f "$lib")" | grep -q '^libfastfb0:' ||
    { ldd "$work/query"; echo "packaging: query does not load libfastfb0's library"; exit 1; }
ISC_USER=$FFB_TEST_FB4_USER "$work/query" "$FFB_TEST_FB4_DSN" "$FFB_TEST_FB4_PASSWORD" \
    >"$work/query.out"
cat "$work/query.out"
# rdb$relation_id < 10: the ten system tables of ids 0-9
if [ "$(grep -c ' system$' "$work/query.out")" -ne 10 ] ||
    ! grep -q "^  0  RDB\\\$PAGES " "$work/query.out"; then
    echo "packaging: query did not print relations 0-9"
    exit 1
fi
# 5 round trips: connect with wire encryption (the FB4 server requires it) 3,
# prepare 1, execute with its first fetch 1 (the transaction's start rides
# the prepare; the ten rows come in that fetch)
grep -qx 'round trips so far: 5' "$work/query.out" ||
    { echo "packaging: expected 5 round trips"; exit 1; }

step "apt-get purge"
"${SUDO[@]}" apt-get purge -y -qq "${pkgs[@]}" >/dev/null
installed=0
if dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -q "ok installed"; then
    echo "packaging: a package is still installed after the purge"
    exit 1
fi
step "done"
