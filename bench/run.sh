#!/usr/bin/env bash
# The driver benchmark, end to end (bench/README.md): install what it needs,
# build, create the benchmark database, then for every link delay start
# ffb-proxy in front of the Firebird 4.0 server and measure libfastfb
# (blocking and async), libfbclient and node-firebird - the scenarios, then
# the concurrency scenario; finally print the Markdown tables and draw the
# chart. Results go to bench/results/ (not tracked).
#
#   bash bench/run.sh [--quick] [--reps N] [--delays "0 2 10"]
#                     [--peers ffb,uv,fbclient,node] [--clients 1,8,32]
#                     [--conc-ms MS] [--no-install] [SERVERS_ENV]
#
# SERVERS_ENV is the servers.env written by tests/servers/fbservers.sh (or
# the directory holding it); default: $FFB_SERVER_STATE, else
# build-servers-state/servers.env. The servers must already be running;
# this script never starts or stops them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

quick=0
reps=5
delays="0 2 10"
peers=ffb,uv,fbclient,node
conc=()
install=1
state=${FFB_SERVER_STATE:-}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --reps) reps=$2; shift ;;
    --delays) delays=$2; shift ;;
    --peers) peers=$2; shift ;;
    --clients) conc+=(--clients "$2"); shift ;;
    --conc-ms) conc+=(--conc-ms "$2"); shift ;;
    --no-install) install=0 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) state=$1 ;;
    esac
    shift
done
if [ "$quick" = 1 ]; then
    reps=1
    delays="0 2"
fi

say() { printf '\n== %s\n' "$*" >&2; }

# ---- servers ---------------------------------------------------------------
[ -n "$state" ] || state=$root/build-servers-state/servers.env
[ -d "$state" ] && state=$state/servers.env
if [ ! -f "$state" ]; then
    echo "run.sh: no servers.env at $state (start the servers with" \
        "tests/servers/fbservers.sh, or pass its path)" >&2
    exit 2
fi
set -a
# shellcheck disable=SC1090
. "$state"
set +a
host=${FFB_TEST_FB4_HOST:-127.0.0.1}
port=${FFB_TEST_FB4_PORT:?servers.env has no fb4 instance}
db=${FFB_TEST_FB4_DBDIR:?servers.env has no FFB_TEST_FB4_DBDIR}/ffbbench.fdb

# ---- dependencies ------------------------------------------------------------
if [ "$install" = 1 ]; then
    say "dependencies"
    need=()
    for pkg in gnuplot-nox libfbclient2 firebird-dev libuv1-dev meson \
        ninja-build pkg-config gcc libssl-dev zlib1g-dev; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
    done
    command -v node >/dev/null 2>&1 || need+=(nodejs npm)
    if [ ${#need[@]} -gt 0 ]; then
        sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
    fi
    (cd bench/node && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
[ -d bench/node/node_modules/node-firebird ] || {
    echo "run.sh: bench/node/node_modules missing (run without --no-install)" >&2
    exit 2
}

# ---- build -------------------------------------------------------------------
say "build"
build=$root/build-bench
opts=(-Dbench=true -Dtests=false -Dexamples=false)
if [ -d "$build" ]; then
    meson configure "$build" "${opts[@]}" >/dev/null
else
    meson setup "$build" "${opts[@]}" >/dev/null
fi
ninja -C "$build" bench/ffb-proxy bench/bench_drivers >&2
proxy=$build/bench/ffb-proxy
drivers=$build/bench/bench_drivers

# ---- database ----------------------------------------------------------------
out=$here/results
mkdir -p "$out"
rm -f "$out"/raw.tsv "$out"/info.tsv "$out"/progress.log "$out"/proxy-*
say "database $db on $host:$port"
"$drivers" setup --host "$host" --port "$port" --db "$db"

proxy_pid=""
cleanup() {
    if [ -n "$proxy_pid" ]; then
        kill "$proxy_pid" 2>/dev/null || true
        wait "$proxy_pid" 2>/dev/null || true
    fi
    "$drivers" drop --host "$host" --port "$port" --db "$db" 2>/dev/null || true
}
trap cleanup EXIT

# ---- measure -------------------------------------------------------------------
quick_flag=()
[ "$quick" = 1 ] && quick_flag=(--quick)
start=$(date +%s)
for d in $delays; do
    say "one-way delay $d ms ($reps repetition(s))"
    "$proxy" --upstream "$host:$port" --port 0 --delay-ms "$d" \
        --stats-file "$out/proxy-$d.stats" >"$out/proxy-$d.out" \
        2>"$out/proxy-$d.err" &
    proxy_pid=$!
    pport=""
    for _ in $(seq 100); do
        # The background shell may not have opened the file yet.
        pport=$(awk '/^port /{print $2; exit}' "$out/proxy-$d.out" \
            2>/dev/null || true)
        [ -n "$pport" ] && break
        sleep 0.05
    done
    [ -n "$pport" ] || { echo "run.sh: ffb-proxy did not start" >&2; exit 1; }
    "$drivers" run --host 127.0.0.1 --port "$pport" --db "$db" --delay "$d" \
        --reps "$reps" --peers "$peers" "${quick_flag[@]}" ${conc[@]+"${conc[@]}"} \
        --proxy-pid "$proxy_pid" --proxy-stats "$out/proxy-$d.stats" \
        --node-dir "$here/node" --out "$out/raw.tsv" --info "$out/info.tsv" \
        2>&1 | tee -a "$out/progress.log" >&2
    kill "$proxy_pid"
    wait "$proxy_pid" 2>/dev/null || true
    proxy_pid=""
done

# ---- report ----------------------------------------------------------------------
say "report ($(($(date +%s) - start)) s of measuring)"
"$drivers" report --in "$out/raw.tsv" --info "$out/info.tsv" \
    --md "$out/results.md" --gnuplot "$out/bench.gp" --png "$out/bench.png"
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot "$out/bench.gp" 2>/dev/null && echo "chart: $out/bench.png" >&2
fi
cat "$out/results.md"
