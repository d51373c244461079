#!/usr/bin/env bash
# The REST benchmarks end to end (bench/rest/README.md, spec rest.md A17):
# build, load both datasets into the Firebird 4 test server (idempotent),
# then for every link delay (ffb-proxy between ffb-rest and Firebird, the
# delay each way) and every db-request-context mode start two ffb-rest
# (bookstore: FirebirdREST's 14 scenarios; Chinook: PostgREST's k6 ones)
# and run ffb-rest-load at every client count, REST and the direct twin
# (the same SQL through libfastfb, through the same proxy). Prints the
# tables; results (raw.tsv, results.md, info.tsv, chart.png) go to
# bench/results/rest-<time>/.
#
#   bash bench/rest/run.sh [-d SECS] [--warmup SECS] [--clients "1 16"]
#                          [--delays "0 1"] [--contexts "auto never"]
#                          [--only LIST] [--no-pin] [--runs N]
#                          [--no-matrix] [--no-targets] [SERVERS_ENV]
#
# After the matrix, the targets phase (README "The targets, measured
# alternately"): at c=16 every read scenario on an ffb-rest at 0 ms and one
# at 1 ms each way, alternated N times (default 3); then row by primary key
# and GETSingle alternated with their direct twins at 0 ms and at 1 ms
# (N + 2 times). The medians give B/A and REST/direct. --no-matrix runs
# only the targets, --no-targets only the matrix.
#
# SERVERS_ENV is the servers.env of tests/servers/fbservers.sh (or its
# directory); default $FFB_SERVER_STATE, else /work/state, else
# build-servers-state. The servers must be running; this script never
# starts or stops them. CPU pinning (2 cores): ffb-rest and ffb-proxy on
# CPU 0, ffb-rest-load on CPU 1; Firebird is the test server's process and
# is not pinned (it shares both). --no-pin leaves everything unpinned.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

dur=10 warm=2 clients="1 16" delays="0 1" contexts="auto never" only="" pin=1
runs=3 matrix=1 targets=1
state=${FFB_SERVER_STATE:-}
while [ $# -gt 0 ]; do
    case "$1" in
    -d) dur=$2; shift ;;
    --warmup) warm=$2; shift ;;
    --clients) clients=$2; shift ;;
    --delays) delays=$2; shift ;;
    --contexts) contexts=$2; shift ;;
    --only) only=$2; shift ;;
    --no-pin) pin=0 ;;
    --runs) runs=$2; shift ;;
    --no-matrix) matrix=0 ;;
    --no-targets) targets=0 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) state=$1 ;;
    esac
    shift
done
say() { printf '\n== %s\n' "$*" >&2; }

# ---- servers ---------------------------------------------------------------
if [ -z "$state" ]; then
    state=/work/state
    [ -f "$state/servers.env" ] || state=$root/build-servers-state
fi
[ -d "$state" ] && state=$state/servers.env
[ -f "$state" ] || {
    echo "run.sh: no servers.env at $state (start the servers with" \
        "tests/servers/fbservers.sh, or pass its path)" >&2
    exit 2
}
set -a
# shellcheck disable=SC1090
. "$state"
set +a
host=${FFB_TEST_FB4_HOST:-127.0.0.1}
port=${FFB_TEST_FB4_PORT:?servers.env has no fb4 instance}
dbdir=${FFB_TEST_FB4_DBDIR:?servers.env has no FFB_TEST_FB4_DBDIR}
export ISC_USER=${FFB_TEST_FB4_USER:-SYSDBA}
export ISC_PASSWORD=${FFB_TEST_FB4_PASSWORD:-masterkey}
book=$dbdir/ffbbench_rest_bookstore.fdb
chin=$dbdir/ffbbench_rest_chinook.fdb

# ---- build -------------------------------------------------------------------
say "build"
command -v meson >/dev/null && dpkg -s libhttp-parser-dev >/dev/null 2>&1 || {
    echo "run.sh: needs meson, libhttp-parser-dev, libh2o-dev, libyajl-dev," \
        "libuv1-dev (apt-get install ...)" >&2
    exit 2
}
build=${FFB_BUILD:-$root/build-bench-rest} # FFB_BUILD: an existing build directory
[ -d "$build" ] || CC=${CC:-gcc} meson setup "$build" --buildtype=release \
    -Dtests=false -Dexamples=false >/dev/null
ninja -C "$build" bench/rest/ffb-rest-load rest/ffb-rest bench/ffb-proxy \
    bench/rest/data/seed bench/rest/data/chinook_gen >&2
LOAD=$build/bench/rest/ffb-rest-load REST=$build/rest/ffb-rest
PROXY=$build/bench/ffb-proxy

# ---- datasets ----------------------------------------------------------------
say "datasets (idempotent: a complete load is kept)"
"$build/bench/rest/data/seed" -q "$host/$port:$book"
"$build/bench/rest/data/chinook_gen" -q "$host/$port:$chin"
# shellcheck source=lib.sh
. "$here/lib.sh"
rest_grant_roles "$host/$port:$book" WEB_USER WEB_ANON
rest_grant_roles "$host/$port:$chin" WEB_USER WEB_ANON POSTGRES

out=$root/bench/results/rest-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out"
tmp=$(mktemp -d)
pids=()
stop_all() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    pids=()
}
trap 'stop_all; rm -rf "$tmp"' EXIT

pin_srv=() pin_cli=()
if [ "$pin" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    pin_srv=(taskset -c 0) pin_cli=(taskset -c 1)
    pinning="ffb-rest + ffb-proxy on CPU 0, ffb-rest-load on CPU 1, Firebird unpinned"
else
    pinning="none"
fi
{
    printf 'date\t%s\n' "$(date -u +%FT%TZ)"
    printf 'commit\t%s\n' "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo -)"
    printf 'cpu\t%s\n' "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    printf 'nproc\t%s\n' "$(nproc)"
    printf 'load_average\t%s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf 'firebird\t%s\n' "FB ${FFB_TEST_FB4_VERSION:-4} at $host:$port (wire crypt ${FFB_TEST_FB4_WIRECRYPT:-?})"
    printf 'pinning\t%s\n' "$pinning"
    printf 'ffb_rest\t%s\n' "db-pool 32, server-threads 1, server-timing-enabled, jwt HS256"
    printf 'duration\t%s s after %s s warm-up\n' "$dur" "$warm"
    printf 'target_runs\t%s (B/A), %s (REST/direct)\n' "$runs" "$((runs + 2))"
} >"$out/info.tsv"

# The wrk cross-check (0 ms): ffb-rest-load, wrk, ffb-rest-load again on
# the same server, c=16, for GETSingle and GETSingleEmbed (wrk/k6.lua);
# wrk's req/s over the mean of the two load runs goes to wrk.md.
wrk_check() {
    local url=$1 ctx=$2 sc a b w
    printf '\n### wrk cross-check (0 ms, context=%s, c=16, %s s each)\n\n' \
        "$ctx" "$dur" >"$out/wrk.md"
    printf '| scenario | ffb-rest-load req/s (before, after) | wrk req/s | wrk p50 ms | wrk errors | wrk / ffb-rest-load |\n|---|---:|---:|---:|---:|---:|\n' >>"$out/wrk.md"
    for sc in GETSingle GETSingleEmbed; do
        say "wrk cross-check: $sc"
        rm -f "$tmp/wrk1/raw.tsv" "$tmp/wrk2/raw.tsv"
        "${pin_cli[@]}" "$LOAD" -k6-url "$url" -only "$sc" -c 16 -d "$dur" \
            -warmup "$warm" -out "$tmp/wrk1" >/dev/null || failed=1
        "${pin_cli[@]}" wrk -t1 -c16 -d"${dur}s" -s "$here/wrk/k6.lua" "$url" \
            -- "$sc" >"$tmp/wrk.out" 2>&1 || failed=1
        "${pin_cli[@]}" "$LOAD" -k6-url "$url" -only "$sc" -c 16 -d "$dur" \
            -warmup "$warm" -out "$tmp/wrk2" >/dev/null || failed=1
        a=$(awk -F'\t' 'NR == 2 {print $9}' "$tmp/wrk1/raw.tsv")
        b=$(awk -F'\t' 'NR == 2 {print $9}' "$tmp/wrk2/raw.tsv")
        w=$(awk -F'\t' '$1 == "wrk" && $2 == "req_s" {print $3}' "$tmp/wrk.out")
        p=$(awk -F'\t' '$1 == "wrk" && $2 == "p50_ms" {print $3}' "$tmp/wrk.out")
        e=$(awk -F'\t' '$1 == "wrk" && $2 == "errors" {print $3}' "$tmp/wrk.out")
        [ "${e:-1}" = 0 ] || failed=1
        awk -v sc="$sc" -v a="$a" -v b="$b" -v w="$w" -v p="$p" -v e="$e" \
            'BEGIN { m = (a + b) / 2; printf "| %s | %.0f (%.0f, %.0f) | %.0f | %.2f | %s | %.2f |\n", sc, m, a, b, w, p, e, (m > 0 ? w / m : 0) }' \
            >>"$out/wrk.md"
    done
}

# start_proxy DELAY_MS: an ffb-proxy in front of the FB4 server; sets
# $fport to its port and appends its pid to `pids`
start_proxy() {
    "${pin_srv[@]}" "$PROXY" --upstream "$host:$port" --port 0 --delay-ms "$1" \
        >"$tmp/proxy.out" 2>"$tmp/proxy.err" &
    pids+=($!)
    fport=""
    for _ in $(seq 1 50); do
        fport=$(awk '/^port /{print $2; exit}' "$tmp/proxy.out")
        [ -n "$fport" ] && break
        sleep 0.1
    done
    [ -n "$fport" ] || { echo "run.sh: ffb-proxy did not start" >&2; exit 1; }
}

failed=0
if [ "$matrix" = 1 ]; then
for d in $delays; do
    fport=$port
    if [ "$d" != 0 ]; then
        start_proxy "$d"
        ppid=${pids[-1]}
        unset 'pids[-1]'
    fi
    first_ctx=1
    for ctx in $contexts; do
        rest_start book "/$book" "$host" "$fport" 32 "$ctx" "${pin_srv[@]}"
        book_url=$url book_pid=${pids[-1]}
        rest_start k6 "/$chin" "$host" "$fport" 32 "$ctx" "${pin_srv[@]}"
        k6_url=$url k6_pid=${pids[-1]}
        for c in $clients; do
            label="${d} ms, context=$ctx, c=$c"
            say "$label"
            args=(-url "$book_url" -k6-url "$k6_url" -server-pid "$book_pid"
                -k6-server-pid "$k6_pid" -c "$c" -d "$dur"
                -warmup "$warm" -out "$out" -label "$label")
            # the direct twin does not depend on the context mode: once
            [ "$first_ctx" = 1 ] &&
                args+=(-direct "$host/$fport:$book" -k6-direct "$host/$fport:$chin")
            [ -n "$only" ] && args+=(-only "$only")
            "${pin_cli[@]}" "$LOAD" "${args[@]}" || failed=1
        done
        if [ "$d" = 0 ] && [ "$first_ctx" = 1 ] && command -v wrk >/dev/null; then
            wrk_check "$k6_url" "$ctx"
        fi
        stop_all
        first_ctx=0
    done
    if [ "$d" != 0 ]; then
        kill "$ppid" 2>/dev/null || true
        wait "$ppid" 2>/dev/null || true
    fi
done

fi

# ---- the targets, alternated (README: "The targets, measured alternately")
# Every read scenario on A (0 ms) and B (ffb-proxy, 1 ms each way), then the
# two REST/direct scenarios against their twins, at 0 ms and at 1 ms.
reads="1,2,3,4,5,6,7,8,9,10,11,12,GETSingle,GETSingleJWT,GETSingleUniqueJWT,GETSingleEmbed,GETAllEmbed,RPCSimple,RPCGETSingle,RPCGETSingleEmbed"
if [ "$targets" = 1 ]; then
    start_proxy 1
    p1=$fport
    rest_start book "/$book" "$host" "$port" 32 auto "${pin_srv[@]}"
    a_book=$url a_book_pid=${pids[-1]}
    rest_start k6 "/$chin" "$host" "$port" 32 auto "${pin_srv[@]}"
    a_k6=$url a_k6_pid=${pids[-1]}
    rest_start book1 "/$book" "$host" "$p1" 32 auto "${pin_srv[@]}"
    b_book=$url b_book_pid=${pids[-1]}
    rest_start k61 "/$chin" "$host" "$p1" 32 auto "${pin_srv[@]}"
    b_k6=$url b_k6_pid=${pids[-1]}
    say "targets: every read at 0 ms (A) and 1 ms (B), c=16, $runs runs each"
    "${pin_cli[@]}" "$LOAD" -url "$a_book" -k6-url "$a_k6" \
        -server-pid "$a_book_pid" -k6-server-pid "$a_k6_pid" \
        -alternate "$b_book" -k6-alternate "$b_k6" \
        -alternate-pid "$b_book_pid" -k6-alternate-pid "$b_k6_pid" \
        -runs "$runs" -c 16 -d "$dur" -warmup "$warm" -only "$reads" \
        -out "$out" -label "targets: A = 0 ms, B = 1 ms each way, context=auto" ||
        failed=1
    nr=$((runs + 2))
    # vs_direct WHAT BOOK_URL K6_URL BOOK_PID K6_PID FB_PORT: the two
    # scenarios alternated with their twins through FB_PORT
    vs_direct() {
        say "targets: REST/direct $1, c=16, $nr runs each"
        "${pin_cli[@]}" "$LOAD" -url "$2" -k6-url "$3" \
            -server-pid "$4" -k6-server-pid "$5" \
            -direct "$host/$6:$book" -k6-direct "$host/$6:$chin" \
            -runs "$nr" -c 16 -d "$dur" -warmup "$warm" -only "1,GETSingle" \
            -out "$out" -label "targets: REST/direct $1, context=auto" ||
            failed=1
    }
    vs_direct "at 0 ms" "$a_book" "$a_k6" "$a_book_pid" "$a_k6_pid" "$port"
    vs_direct "at 1 ms each way" "$b_book" "$b_k6" "$b_book_pid" "$b_k6_pid" "$p1"
    stop_all
fi

# ---- chart (gnuplot, when installed) -----------------------------------------
if command -v gnuplot >/dev/null; then
    # one bar group per scenario: REST req/s at c=16 for each condition
    awk -F'\t' 'NR > 1 && $2 == "rest" && $5 == 16 && $1 !~ /^targets/ {
        print $1 "\t" $4 "\t" $9 }' "$out/raw.tsv" >"$tmp/c16.tsv"
    if [ -s "$tmp/c16.tsv" ]; then
        awk -F'\t' '{ if (!($2 in row)) { row[$2] = ++n; name[n] = $2 }
            if (!($1 in col)) { col[$1] = ++m; lab[m] = $1 }
            val[row[$2], col[$1]] = $3 }
            END { printf "scenario"; for (j = 1; j <= m; j++) printf "\t\"%s\"", lab[j]
                  print ""
                  for (i = 1; i <= n; i++) { printf "\"%s\"", name[i]
                      for (j = 1; j <= m; j++) printf "\t%s", ((i, j) in val) ? val[i, j] : 0
                      print "" } }' "$tmp/c16.tsv" >"$out/chart.dat"
        ncol=$(head -1 "$out/chart.dat" | awk -F'\t' '{print NF}')
        gnuplot <<EOF || true
set terminal pngcairo size 1400,700 noenhanced
set output "$out/chart.png"
set title "ffb-rest, c=16: req/s per scenario and condition (FB4, $(nproc) cores shared)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45 scale 0
set logscale y
set ylabel "req/s (log)"
set key top right
set datafile separator "\t"
plot for [i=2:$ncol] "$out/chart.dat" using i:xtic(1) title columnheader(i)
EOF
    fi
fi

say "results in $out"
cat "$out/results.md"
[ -f "$out/wrk.md" ] && cat "$out/wrk.md"
exit $failed
