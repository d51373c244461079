#!/usr/bin/env bash
# The main job (README, first command): install what is needed, build
# libfastfb, start private Firebird 3.0 and 4.0 servers on loopback, and run
# the connection demo against them, printing what was negotiated and the
# round trips each step cost; then the side-by-side driver benchmark
# (bench/README.md), printing its table. Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

say() { printf '\n==> %s\n' "$*"; }

say "installing build dependencies"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq meson ninja-build pkg-config gcc libssl-dev zlib1g-dev \
    libuv1-dev libcmocka-dev >/dev/null

say "installing Firebird 3.0 (Debian 12) and 4.0 (Debian 13 root); first run takes a few minutes"
bash tests/servers/fbservers.sh install

say "building"
[ -d build-demo ] || meson setup build-demo --buildtype=release >/dev/null
ninja -C build-demo >/dev/null

state="$top/build-demo/servers"
say "starting the test servers"
bash tests/servers/fbservers.sh start "$state"
trap 'bash tests/servers/fbservers.sh stop "$state" >/dev/null 2>&1 || true' EXIT
set -a; . "$state/servers.env"; set +a

demo() {
    local title=$1; shift
    say "$title"
    ./build-demo/examples/example_connect "$@"
}

fb3="$FFB_TEST_FB3_HOST/$FFB_TEST_FB3_PORT"
fb4="$FFB_TEST_FB4_HOST/$FFB_TEST_FB4_PORT"
demo "Firebird 3.0: create a database (Srp, Arc4)" --plugins Srp,Srp256 \
    --create "$fb3:$FFB_TEST_FB3_DBDIR/demo.fdb"
demo "Firebird 3.0: attach (Srp, Arc4)" --plugins Srp,Srp256 \
    "$fb3:$FFB_TEST_FB3_DBDIR/demo.fdb"
demo "Firebird 3.0: attach with zlib compression (Srp, Arc4)" --plugins Srp,Srp256 \
    --compress --drop "$fb3:$FFB_TEST_FB3_DBDIR/demo.fdb"
demo "Firebird 4.0: create a database (Srp256, ChaCha64)" \
    --create "$fb4:$FFB_TEST_FB4_DBDIR/demo.fdb"
demo "Firebird 4.0: attach (Srp256, ChaCha)" --ciphers ChaCha \
    "$fb4:$FFB_TEST_FB4_DBDIR/demo.fdb"
demo "Firebird 4.0: attach with zlib compression (Srp256, ChaCha)" --ciphers ChaCha \
    --compress --drop "$fb4:$FFB_TEST_FB4_DBDIR/demo.fdb"
demo "Firebird 4.0: attach with wire encryption disabled (flow B, 2 round trips)" \
    --crypt disabled "$FFB_TEST_FB4E_HOST/$FFB_TEST_FB4E_PORT:$FFB_TEST_FB4E_DB"

say "the driver benchmark: libfastfb (blocking and async), libfbclient and node-firebird over a latency proxy, then N concurrent clients (about 18 minutes; FFB_BENCH_ARGS=--quick for a short run)"
# shellcheck disable=SC2086
bash bench/run.sh ${FFB_BENCH_ARGS:-} "$state/servers.env"
say "done"
