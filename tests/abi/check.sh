#!/bin/sh
# The ABI check (docs/abi.md): the libraries in LIBDIR against the 0.1.0
# baseline in tests/abi/*.abi.
#
#   tests/abi/check.sh SOURCE_ROOT LIBDIR        check (meson test abi, CI)
#   tests/abi/check.sh SOURCE_ROOT LIBDIR --update   write a new baseline
#
# LIBDIR holds libfastfb.so.0 and libfastfb_uv.so.0 built with debug info
# (-g: meson's debug/debugoptimized build types, or dpkg-buildpackage's
# unstripped build tree). Both sides are reduced to abixml by abidw,
# limited to the types of include/ (--headers-dir), and compared with
# abidiff. Fails when a symbol of the baseline is gone or a public function
# or struct changed (tests/abi/suppressions.abignore lets the extensible
# structs grow at their end); added symbols pass and are listed.
set -eu
src=$1
dir=$2
mode=${3:-check}
base=$src/tests/abi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for lib in libfastfb.so.0 libfastfb_uv.so.0; do
    so=$dir/$lib
    if [ ! -e "$so" ]; then
        echo "abi: $so: not built"
        status=1
        continue
    fi
    if ! readelf -S "$so" | grep -q '\.debug_info'; then
        echo "abi: $so has no debug info; build it with -g (meson: --buildtype=debugoptimized)"
        status=1
        continue
    fi
    abidw --headers-dir "$src/include" --drop-private-types --no-corpus-path \
        --no-comp-dir-path --short-locs --out-file "$tmp/$lib.abi" "$so"
    if [ "$mode" = --update ]; then
        cp "$tmp/$lib.abi" "$base/$lib.abi"
        echo "abi: wrote $base/$lib.abi"
        continue
    fi
    rc=0
    abidiff --no-added-syms --suppressions "$base/suppressions.abignore" \
        "$base/$lib.abi" "$tmp/$lib.abi" >"$tmp/report" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "abi: $lib: an incompatible change against the baseline (abidiff exit $rc):"
        cat "$tmp/report"
        status=1
    elif ! python3 "$base/extensible.py" "$base/suppressions.abignore" \
        "$base/$lib.abi" "$tmp/$lib.abi"; then
        echo "abi: $lib: an extensible struct changed other than at its end"
        status=1
    else
        # additions are allowed (docs/abi.md); say what they are
        added=$(abidiff --suppressions "$base/suppressions.abignore" \
            "$base/$lib.abi" "$tmp/$lib.abi" 2>&1 | grep -E "^  \[A\] " || true)
        echo "abi: $lib: compatible with the baseline${added:+; added:}"
        [ -z "$added" ] || echo "$added"
        # a symbol added after a release goes into a version node of its
        # own (FASTFB_0.2 ...), never into a node the baseline has
        nodes=$(grep -o "<elf-symbol name='[^']*' version='[^']*'" "$base/$lib.abi" |
            sed "s/.*version='//; s/'\$//" | sort -u)
        for a in $(printf '%s\n' "$added" | grep -o '{[^}]*@@[^}]*}' || true); do
            node=${a##*@@}
            node=${node%\}}
            name=${a#\{}
            name=${name%@@*}
            if printf '%s\n' "$nodes" | grep -qx "$node"; then
                echo "abi: $lib: $name was added to $node, a version node of the baseline: give it a new node (docs/abi.md)"
                status=1
            fi
        done
    fi
done
exit "$status"
