#!/usr/bin/env bash
# The project's test command (README, second command; .ci/run runs it):
# installs the build dependencies and the Firebird 3.0 and 4.0 test servers,
# starts the servers on loopback, then builds and tests in stages, each in
# its own build directory so a failure is attributable:
#
#   1. gcc, release: every suite (unit, engine, fuzz replay, api, lint,
#      integration against the real servers)
#   2. clang, ASan + UBSan (halt on error): unit, engine, fuzz, integration,
#      rest (ffb-rest, rest/)
#   2b. clang, ThreadSanitizer (halt on error): the pool core's unit tests
#      (poolcore, pooloptions) and the pool and uv integration suites
#   3. valgrind: unit and engine
#   3b. 32-bit (i386) build: unit, engine and fuzz replay, where size_t,
#      long and pointers are 32 bits (tests/i386-cross.ini)
#   4. short libFuzzer runs of every fuzz target (new crashes fail the run)
#   6. the Debian packages: built, lintian, ABI check, installed, an example
#      built against them and run on FB4, removed (tests/packaging.sh)
#
# The servers are stopped on exit. Needs root (or sudo) for apt-get, chroot
# and the servers.
#
#   FFB_SERVER_STATE  server state directory (default: build-servers-state)
#   FFB_FUZZ_SECONDS  seconds per fuzz target in stage 4 (default 20; 0 = skip)
set -euo pipefail

cd "$(dirname "$0")/.."
top=$(pwd)
STATE=${FFB_SERVER_STATE:-$top/build-servers-state}
FUZZ_SECONDS=${FFB_FUZZ_SECONDS:-20}

SUDO=()
# shellcheck disable=SC2054  # the commas belong to one sudo option
[ "$(id -u)" -eq 0 ] || SUDO=(sudo --preserve-env=FFB_TRIXIE_ROOT,FFB_DEBIAN_MIRROR,FFB_SERVER_START_TIMEOUT)
FBS=("${SUDO[@]}" bash tests/servers/fbservers.sh)

stage() { printf '\n======== %s ========\n' "$*"; }

stage "installing build dependencies"
export DEBIAN_FRONTEND=noninteractive
# i386 libraries beside the amd64 ones, for stage 3b.
"${SUDO[@]}" dpkg --add-architecture i386
"${SUDO[@]}" apt-get update -qq
# libfbclient2: dlopen'ed by ffb-oltp --driver=fbclient (suite oltp, stage 1).
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
    meson ninja-build pkg-config gcc g++ clang libclang-rt-14-dev llvm \
    libssl-dev zlib1g-dev libuv1-dev libcmocka-dev valgrind python3 \
    libh2o-dev libyajl-dev libhttp-parser-dev \
    debhelper dpkg-dev lintian abigail-tools \
    libfbclient2 \
    binutils locales curl openssl \
    gcc-multilib libssl-dev:i386 zlib1g-dev:i386 libcmocka-dev:i386 >/dev/null
# curl (built with HTTP/2) and the openssl command: rest_it's TLS and h2
# tests (rest/tests/it_tls.h).
# The locale tests/unit/test_locale.c runs under (FFB_TEST_REQUIRE_LOCALE).
locale -a 2>/dev/null | grep -qix 'de_DE.utf-\?8' ||
    "${SUDO[@]}" localedef -i de_DE -f UTF-8 de_DE.UTF-8

# node and npm for rest/tests/postgrest-js (meson test rest_postgrest_js):
# @supabase/postgrest-js as pinned by its package-lock.json.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
(cd rest/tests/postgrest-js && npm ci --no-audit --no-fund --loglevel=error)

stage "installing and starting the Firebird 3.0 and 4.0 test servers"
"${FBS[@]}" install
trap '"${FBS[@]}" stop "$STATE" || true' EXIT
trap 'exit 130' INT TERM
"${FBS[@]}" start "$STATE"
# A failure here is the servers' fault, not the library's.
"${SUDO[@]}" bash tests/servers/selftest.sh "$STATE"

set -a
# shellcheck disable=SC1091
. "$STATE/servers.env"
set +a
export FFB_TEST_REQUIRE_SERVER=1
export FFB_TEST_REQUIRE_LOCALE=1

total_ok=0
total_fail=0
failed_stages=()

# After a stage that used the servers: every instance must still answer.
# Firebird 4.0.5 can wedge after a connection cut mid-request (its own race,
# docs/testing.md); then the next stages would only time out. The wedge is
# reported, with the server's stacks, counted as a failure, and the servers
# are started again for the stages that follow.
servers_wedged=0
check_servers() {
    if ! "${FBS[@]}" probe "$STATE"; then
        echo "after stage '$1': a test server stopped answering (see above); restarting the servers"
        servers_wedged=$((servers_wedged + 1))
        total_fail=$((total_fail + 1))
        failed_stages+=("servers after $1")
        "${FBS[@]}" start "$STATE"
        set -a
        # shellcheck disable=SC1091
        . "$STATE/servers.env"
        set +a
    fi
    return 0
}

# meson test with its summary kept for the final count.
run_suites() {
    local name=$1 dir=$2; shift 2
    local log="$dir/stage-summary.txt" rc=0
    meson test -C "$dir" --print-errorlogs "$@" 2>&1 | tee "$log" || rc=$?
    local ok fail
    ok=$(awk '/^Ok:/ {print $2}' "$log" | tail -n 1)
    fail=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {s += $NF} END {print s + 0}' "$log")
    total_ok=$((total_ok + ${ok:-0}))
    total_fail=$((total_fail + fail))
    if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || [ -z "$ok" ]; then
        failed_stages+=("$name")
        # (an if, not `&&`: under set -e a false test as the function's
        # last command would end the whole run at the first failed stage)
        if [ -z "$ok" ]; then total_fail=$((total_fail + 1)); fi
    fi
    return 0
}

stage "1. gcc release build: all suites"
rm -rf build-ci-release
CC=gcc meson setup build-ci-release --buildtype=release >/dev/null
ninja -C build-ci-release
run_suites "gcc release" build-ci-release
check_servers "gcc release"

stage "2. clang ASan+UBSan build: unit, engine, fuzz, integration"
rm -rf build-ci-asan
CC=clang meson setup build-ci-asan --buildtype=debug \
    -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-ci-asan
ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    run_suites "asan+ubsan" build-ci-asan \
    --suite unit --suite engine --suite fuzz --suite integration --suite rest \
    --suite restbench --suite growth
check_servers "asan+ubsan"

stage "2b. clang ThreadSanitizer build: poolcore, pooloptions, pool, uv"
# The threads of the blocking pool (test_pool_hammer: 8 threads through a
# faulty proxy) and the loop of the async one. libuv, OpenSSL and zlib are
# not instrumented; none of their use has needed a suppression (the uv
# adapter runs on one thread, each pool thread has its own connections).
rm -rf build-ci-tsan
CC=clang meson setup build-ci-tsan --buildtype=debug \
    -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-ci-tsan
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_suites "tsan" build-ci-tsan poolcore pooloptions pool uv
check_servers "tsan"

stage "3. valgrind: unit and engine"
run_suites "valgrind" build-ci-release --setup valgrind --suite unit --suite engine

stage "3b. 32-bit (i386) build: unit, engine, fuzz"
# size_t, long and pointers of 32 bits: a server's count times an element
# size wraps here first. clang with -fforce-enable-int128 and the 128-bit
# helpers of tests/i386-int128.c, since gcc has no __int128 on i386
# (tests/i386-cross.ini).
rm -rf build-ci-i386
mkdir build-ci-i386
clang -m32 -fforce-enable-int128 -O2 -fPIC -c tests/i386-int128.c \
    -o build-ci-i386/int128.o
meson setup build-ci-i386 --cross-file tests/i386-cross.ini \
    --buildtype=debugoptimized \
    -Dc_link_args="-m32 '$top/build-ci-i386/int128.o'" >/dev/null
ninja -C build-ci-i386
run_suites "i386" build-ci-i386 --suite unit --suite engine --suite fuzz

if [ "$FUZZ_SECONDS" != 0 ]; then
    stage "4. libFuzzer: ${FUZZ_SECONDS}s per target"
    rm -rf build-ci-fuzz
    CC=clang meson setup build-ci-fuzz --buildtype=debugoptimized -Dfuzz=true \
        -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
    ninja -C build-ci-fuzz
    fuzz_fail=0
    for t in build-ci-fuzz/tests/fuzz/fuzz_* build-ci-fuzz/rest/tests/fuzz_*; do
        [ -x "$t" ] && [ -f "$t" ] || continue
        name=$(basename "$t")
        case "$name" in fuzz_replay_*) continue ;; esac
        corpus=tests/fuzz/corpus/$name
        # ffb-rest's targets keep their corpus beside them
        [ -d "$corpus" ] || corpus=rest/tests/corpus/$name
        work=$(mktemp -d)
        if "$t" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 \
            -artifact_prefix="$work/" "$work" "$corpus" >"$work/log" 2>&1; then
            echo "$name: $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$work/log" || tail -n 1 "$work/log")"
            total_ok=$((total_ok + 1))
        else
            echo "$name: FAILED"; tail -n 40 "$work/log"
            fuzz_fail=1
            total_fail=$((total_fail + 1))
        fi
        rm -rf "$work"
    done
    [ "$fuzz_fail" -eq 0 ] || failed_stages+=("libFuzzer")
fi

stage "5. benchmark smoke run: libfastfb, libfbclient and node-firebird over ffb-proxy"
# One quick round of bench/run.sh: every peer must run every scenario and
# check what it reads (bench/README.md); the times are not judged here.
if bash bench/run.sh --quick "$STATE/servers.env"; then
    total_ok=$((total_ok + 1))
else
    echo "benchmark smoke run: FAILED"
    total_fail=$((total_fail + 1))
    failed_stages+=("benchmark")
fi

stage "6. Debian packages: build, lintian, ABI, install, examples/query.c on FB4, purge"
# tests/packaging.sh, docs/packaging.md. About 80 s of CPU.
if bash tests/packaging.sh "$STATE/servers.env"; then
    total_ok=$((total_ok + 1))
else
    echo "Debian packages: FAILED"
    total_fail=$((total_fail + 1))
    failed_stages+=("packaging")
fi

stage "summary"
if [ "${#failed_stages[@]}" -ne 0 ]; then
    echo "failed stages: ${failed_stages[*]}"
fi
echo "$total_ok passed, $total_fail failed"
[ "${#failed_stages[@]}" -eq 0 ]
