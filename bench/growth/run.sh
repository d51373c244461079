#!/usr/bin/env bash
# The growth test (bench/growth/README.md): a private Firebird 4.0 instance
# with the OS file cache bypassed (UseFileSystemCache = false: the database
# is opened with O_DIRECT, checked in /proc) and a small page cache; the
# database grown in steps with ffb-tpcc, the same load at every step; a table
# like IBSurgeon's and a PNG chart.
#
#   bash bench/growth/run.sh [--quick] [--steps "W1 W2 ..."] [--out DIR]
#                            [--modes "procs client"] [--fresh]
#
#   --quick          10, 20, 30 warehouses at scale 1/100 with a 4 MB page
#                    cache, 5 s warm-up + 20 s measured each (about 2 minutes)
#   --steps LIST     warehouse counts to grow through (default 20 30 40 50 60
#                    80 100: about 0.25 to 1.2 GB; about 16 minutes)
#   --duration S     measured seconds per step (default 60), --warmup S (15)
#   --terminals N    (default 20)
#   --cache-pages N  Firebird page cache in 16 KB pages (default 16384 =
#                    256 MB: the database outgrows it at about 22 warehouses)
#   --scale N        ffb-tpcc --scale (default 10: a tenth of TPC-C's rows per
#                    warehouse, so 20 terminals spread over many warehouses,
#                    as IBSurgeon's 20 over 105..350)
#   --modes LIST     ffb-tpcc run modes measured at every step, in this order
#                    (default "procs client": each transaction one PSQL
#                    procedure, 1 round trip, as IBSurgeon; then every
#                    statement from the client, whose round trips and CPU per
#                    transaction must stay flat)
#   --fresh          every step a new database loaded from scratch (indexes
#                    after the load), as IBSurgeon did; default: grow one
#                    database in place
#   --out DIR        results (default bench/results/growth, quick: .../quick)
#   --keep           leave the instance running and the database in place
#
# Needs root (the instance runs as user firebird in the Debian 13 root of
# tests/servers/fbservers.sh, which `fbservers.sh install` sets up) and a
# build with ffb-tpcc (FFB_BUILD, default build/). The shared test servers
# (ports 3051-3064) are not touched: this instance has its own port (3071),
# its own state directory and its own name.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)

QUICK=0 KEEP=0 FRESH=0 MODES="procs client"
STEPS="" DURATION="" WARMUP="" TERMINALS=20 CACHE_PAGES="" SCALE="" OUT=""
while [ $# -gt 0 ]; do
    case $1 in
    --quick) QUICK=1 ;;
    --keep) KEEP=1 ;;
    --fresh) FRESH=1 ;;
    --modes) MODES=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --terminals) TERMINALS=$2; shift ;;
    --cache-pages) CACHE_PAGES=$2; shift ;;
    --scale) SCALE=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if [ $QUICK = 1 ]; then
    STEPS=${STEPS:-"10 20 30"} DURATION=${DURATION:-20} WARMUP=${WARMUP:-5}
    SCALE=${SCALE:-100} CACHE_PAGES=${CACHE_PAGES:-256}
    OUT=${OUT:-$top/bench/results/growth/quick}
else
    STEPS=${STEPS:-"20 30 40 50 60 80 100"} DURATION=${DURATION:-60} WARMUP=${WARMUP:-15}
    SCALE=${SCALE:-10} CACHE_PAGES=${CACHE_PAGES:-16384}
    OUT=${OUT:-$top/bench/results/growth}
fi
BUILD=${FFB_BUILD:-$top/build}
TPCC=$BUILD/bench/growth/ffb-tpcc
STATE=${FFB_GROWTH_STATE:-$top/build-growth-state}
PORT=${FFB_GROWTH_PORT:-3071}
NAME=fbgrowth
TRIXIE_ROOT=$(realpath -m "${FFB_TRIXIE_ROOT:-/var/lib/ffb-test/trixie}")
FBS=$top/tests/servers/fbservers.sh

log() { printf 'run.sh: %s\n' "$*" >&2; }
die() { printf 'run.sh: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (the instance runs in the Debian 13 root as user firebird)"
if [ ! -x "$TPCC" ]; then
    log "building ffb-tpcc in $BUILD"
    [ -d "$BUILD" ] || CC=${CC:-gcc} meson setup "$BUILD" --buildtype=release >/dev/null
    ninja -C "$BUILD" bench/growth/ffb-tpcc >/dev/null
fi
command -v fincore >/dev/null || die "fincore (util-linux) is missing"
command -v gnuplot >/dev/null ||
    apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends gnuplot-nox >/dev/null
[ -e "$TRIXIE_ROOT/.ffb-debootstrap-done" ] || bash "$FBS" install
mkdir -p "$STATE" "$OUT"

# --- the private instance -------------------------------------------------
# Only this instance is in the list, so fbservers.sh starts, checks and
# stops nothing else. SuperServer, wire encryption enabled (the client's
# default then encrypts), the OS file cache bypassed.
export FFB_SERVER_INSTANCES="$NAME 4 $PORT Srp256,Srp - Enabled false"
export FFB_SERVER_CACHE_PAGES=$CACHE_PAGES
export FFB_SERVER_EXTRA_CONF="UseFileSystemCache = false"
# Stopped on exit and its directory (security database, logs) removed.
stop_instance() {
    bash "$FBS" stop "$STATE" >/dev/null 2>&1 || true
    rm -rf --one-file-system "${TRIXIE_ROOT:?}/var/lib/ffb-test/$NAME" "${STATE:?}/$NAME"
}
[ $KEEP = 1 ] || trap stop_instance EXIT
log "starting the private Firebird 4.0 instance on port $PORT (page cache $CACHE_PAGES pages)"
bash "$FBS" start "$STATE" 2>&1 | sed 's/^/  /' >&2
set -a; . "$STATE/servers.env"; set +a
DBDIR_S=$FFB_TEST_FBGROWTH_DBDIR                 # as the server sees it
DBDIR_H=$(cd "$STATE/$NAME/db" && pwd -P)        # on this host
DB_S=$DBDIR_S/growth.fdb DB_H=$DBDIR_H/growth.fdb
DSN="127.0.0.1/$PORT:$DB_S"
T=(--dsn="$DSN" --user=SYSDBA --password=masterkey)
"$TPCC" drop "${T[@]}" >/dev/null 2>&1 || true
rm -f "$DB_H"
fs=$(df -T "$DBDIR_H" | awk 'NR == 2 {print $2}')
[ "$fs" != tmpfs ] || die "$DBDIR_H is on tmpfs, which has no O_DIRECT"

server_pid() {
    local f
    for f in /proc/[0-9]*/environ; do
        if grep -qzxF "FFB_TEST_INSTANCE=$STATE:$NAME" "$f" 2>/dev/null; then
            f=${f#/proc/}; echo "${f%/environ}"; return
        fi
    done
}
# O_DIRECT on every descriptor the server holds on the database (octal
# flags in /proc/PID/fdinfo; O_DIRECT is 040000 on x86-64 and arm64 is
# 0200000: taken from the C library's headers, not guessed).
odirect_bit=$(printf '#define _GNU_SOURCE\n#include <fcntl.h>\nO_DIRECT\n' | cc -E -P - | tail -n1)
# (The server closes the file when the last attachment goes, so this runs
# while ffb-tpcc works: see checked.)
odirect_check() {
    local pid fd n=0 bad=0 flags
    pid=$(server_pid)
    [ -n "$pid" ] || die "the instance's server process is gone"
    for fd in /proc/"$pid"/fd/*; do
        [ "$(readlink "$fd")" = "$DB_S" ] || [ "$(readlink "$fd")" = "$DB_H" ] || continue
        flags=$(awk '/^flags:/ {print $2}' "/proc/$pid/fdinfo/${fd##*/}")
        n=$((n + 1))
        if (( (8#$flags & odirect_bit) == 0 )); then bad=$((bad + 1)); fi
        ODIRECT_FLAGS=$flags
    done
    [ $n -gt 0 ] || return 1
    [ $bad = 0 ] || die "the database is open WITHOUT O_DIRECT (flags $ODIRECT_FLAGS): UseFileSystemCache did not take effect"
    ODIRECT_FDS=$n
}
# checked MUST OUTFILE CMD...: run CMD with its stdout in OUTFILE and check
# the server's descriptors on the database while it runs; with MUST = 1 the
# check must have happened at least once (a run lasts long enough; a load
# with nothing to do may not).
checked() {
    local must=$1 out=$2; shift 2
    "$@" > "$out" &
    local pid=$! seen=0
    while kill -0 $pid 2>/dev/null; do
        if [ $seen = 0 ] && odirect_check; then seen=1; fi
        sleep 0.5
    done
    wait $pid || die "$* failed (exit $?)"
    [ $seen = 1 ] || [ "$must" = 0 ] || die "the server never held $DB_S open while this ran: $*"
}
cached_kb() { awk '/^Cached:/ {print $2}' /proc/meminfo; }
resident_bytes() { fincore --bytes --noheadings --output RES "$DB_H" | tr -d ' '; }

# Created in an attachment of its own: Firebird 4 keeps a database it has
# just created open without O_DIRECT until its last attachment ends. The
# few pages that went through the OS cache then are dropped from it.
"$TPCC" create "${T[@]}" --scale="$SCALE" >/dev/null
sync "$DB_H"
dd if="$DB_H" iflag=nocache count=0 status=none
raw=$OUT/raw.tsv
printf 'step\twarehouses\tdb_bytes\tload_s\tload_rows\tload_mb_s\tload_rows_s\tindex_s\ttpm\ttpmc\tp95_ms\tp95_no_ms\trt_per_op\tcpu_us_per_op\thit_ratio\tpage_reads\tops\tretries\tresident_bytes\tcached_delta_kb\tcpu_us_per_rt\tmode\n' > "$raw"
t_start=$SECONDS step=0
server_version=""
for W in $STEPS; do
    step=$((step + 1))
    if [ $FRESH = 1 ] && [ $step -gt 1 ]; then
        log "step $step: --fresh: a new database"
        "$TPCC" drop "${T[@]}" >/dev/null || die "drop failed"
        "$TPCC" create "${T[@]}" --scale="$SCALE" >/dev/null
        sync "$DB_H"
        dd if="$DB_H" iflag=nocache count=0 status=none
    fi
    c0=$(cached_kb)
    log "step $step: grow to $W warehouses"
    checked 0 "$OUT/load-$step.out" nice "$TPCC" load "${T[@]}" --warehouses="$W" --scale="$SCALE" --threads=2
    lout=$(cat "$OUT/load-$step.out"); echo "$lout" >&2
    "$TPCC" check "${T[@]}" >/dev/null || die "consistency check failed after the load"
    L=$(grep '^RESULT load ' <<<"$lout")
    for MODE in $MODES; do
    log "step $step: run --mode=$MODE ($TERMINALS terminals, ${WARMUP} s warm-up, ${DURATION} s measured)"
    checked 1 "$OUT/run-$step-$MODE.out" "$TPCC" run "${T[@]}" --mode="$MODE" --terminals="$TERMINALS" --warmup="$WARMUP" --duration="$DURATION" --seed=$step
    rout=$(cat "$OUT/run-$step-$MODE.out")
    echo "$rout" | grep -v '^RESULT' >&2
    R=$(grep '^RESULT run ' <<<"$rout")
    [ "$(sed -n 's/.* ok=\([01]\)$/\1/p' <<<"$R")" = 1 ] || die "step $step ($MODE): a wrong answer"
    server_version=$(sed -n '1s/.*, \(LI-V[^,]*\)$/\1/p' <<<"$rout")
    res=$(resident_bytes) c1=$(cached_kb)
    f() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$step" "$W" "$(f bytes "$R")" "$(f seconds "$L")" "$(f rows "$L")" "$(f mb_s "$L")" \
        "$(f rows_s "$L")" "$(f index_s "$L")" "$(f tpm "$R")" "$(f tpmc "$R")" "$(f p95_ms "$R")" \
        "$(f p95_no_ms "$R")" "$(f rt_per_op "$R")" "$(f cpu_us_per_op "$R")" "$(f hit_ratio "$R")" \
        "$(f page_reads "$R")" "$(f ops "$R")" "$(f retries "$R")" "$res" "$((c1 - c0))" \
        "$(f cpu_us_per_rt "$R")" "$MODE" >> "$raw"
    log "step $step ($MODE) done: $(f bytes "$R") bytes, $(f tpm "$R") tpm; page cache holds $res bytes of the file; O_DIRECT on $ODIRECT_FDS descriptor(s) (flags $ODIRECT_FLAGS)"
    done
done
log "full consistency check"
"$TPCC" check "${T[@]}" --full >&2 || die "the final consistency check failed"
elapsed=$((SECONDS - t_start))

# --- table and chart --------------------------------------------------------
cache_mb=$((CACHE_PAGES * 16 / 1024))
md=$OUT/results.md
{
    echo "# Growth test results ($(date -u +%Y-%m-%d))"
    echo
    echo "Firebird $server_version SuperServer, private instance, page size 16384,"
    echo "page cache $CACHE_PAGES pages ($cache_mb MB), UseFileSystemCache = false (O_DIRECT"
    echo "verified on the server's descriptors, flags $ODIRECT_FLAGS), forced writes on;"
    echo "ffb-tpcc scale 1/$SCALE, $TERMINALS terminals, ${WARMUP} s warm-up + ${DURATION} s measured per step and mode ($MODES),"
    [ $FRESH = 1 ] && echo "every step a new database loaded from scratch (--fresh),"
    echo "load with 2 connections through the batch API; $(nproc) cores shared with other work"
    echo "($(uname -r)); the whole run took $elapsed s."
    echo
    for MODE in $MODES; do
    echo "## --mode=$MODE"
    echo
    case $MODE in
    procs) echo "Each transaction one PSQL procedure: its start, call and commit in one write (1 round trip), as IBSurgeon's test ran it." ;;
    client) echo "Every statement sent from the client through libfastfb: the client's round trips and CPU per transaction must not grow with the database." ;;
    esac
    echo
    echo "| step | warehouses | DB MB | DB / cache | load s | load MB/s | load rows/s | tpm | vs step 1 | tpmC | p95 ms | p95 new-order ms | RT/op | client CPU µs/op | client CPU µs/RT | hit ratio | page reads/op | retries | file in OS cache | Cached Δ |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v cache="$cache_mb" -v mode="$MODE" 'NR == 1 || $22 != mode {next} {
        mb = $3 / 1048576; if (!n++) t1 = $9
        printf "| %d | %d | %.0f | %.1f | %.1f | %.2f | %.0f | %.0f | %+.1f%% | %.0f | %.1f | %.1f | %.2f | %.0f | %.1f | %.4f | %.2f | %d | %.0f KB | %+.0f MB |\n",
            $1, $2, mb, mb / cache, $4, $6, $7, $9, ($9 / t1 - 1) * 100, $10, $11, $12, $13, $14, $21, $15,
            ($17 > 0 ? $16 / $17 : 0), $18, $19 / 1024, $20 / 1024 }' "$raw"
    echo
    awk -F'\t' -v mode="$MODE" 'NR == 1 || $22 != mode {next} {
        if (!n++ || $13 < rmin) rmin = $13; if ($13 > rmax) rmax = $13
        if (n == 1 || $14 < cmin) cmin = $14; if ($14 > cmax) cmax = $14
        if (n == 1 || $21 < pmin) pmin = $21; if ($21 > pmax) pmax = $21
        if (n == 1 || $6 < lmin) lmin = $6; if ($6 > lmax) lmax = $6
        if (n > 1 && prev > 0 && $9 < prev * 0.9) cliff = cliff sprintf(" step %d (%+.1f%%)", $1, ($9 / prev - 1) * 100)
        prev = $9; if (n == 1) first = $9; last = $9 }
        END {
        printf "Spread over the steps (max / min - 1): client round trips per transaction %.2f .. %.2f (%.1f%%); client CPU per transaction %.0f .. %.0f µs (%.1f%%), per round trip %.1f .. %.1f µs (%.1f%%); load speed %.2f .. %.2f MB/s. Throughput first to last step %+.1f%%; drops of more than 10%% between neighbouring steps (cliffs): %s.\n",
            rmin, rmax, (rmax / rmin - 1) * 100, cmin, cmax, (cmax / cmin - 1) * 100,
            pmin, pmax, (pmax / pmin - 1) * 100, lmin, lmax, (last / first - 1) * 100, cliff == "" ? "none" : cliff }' "$raw"
    echo
    done
} > "$md"
for MODE in $MODES; do # one file per mode, for the chart's lines
    awk -F'\t' -v m="$MODE" 'NR == 1 || $22 == m' "$raw" > "$OUT/raw-$MODE.tsv"
done
gnuplot <<EOF
set terminal pngcairo size 900,700 font "sans,10" noenhanced
set output "$OUT/growth.png"
set datafile separator "\t"
set key bottom right
set xrange [0:*]
set multiplot layout 2,1 title "Growth test: Firebird $server_version, page cache $cache_mb MB, OS cache bypassed (O_DIRECT)"
set xlabel "database size (MB)"
set ylabel "transactions per minute"
set y2label "load MB/s"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set arrow from $cache_mb, graph 0 to $cache_mb, graph 1 nohead dt 2 lc rgb "gray"
set label "page cache" at $cache_mb, graph 0.95 offset 0.5,0
plot for [m in "$MODES"] "$OUT/raw-".m.".tsv" using (\$3/1048576):9 every ::1 with linespoints lw 2 title "tpm, --mode=".m, \
     "$OUT/raw-".word("$MODES", 1).".tsv" using (\$3/1048576):6 every ::1 axes x1y2 with linespoints dt 3 title "load MB/s"
unset arrow
unset label
set ylabel "round trips per transaction"
set y2label "client CPU µs per transaction"
plot for [m in "$MODES"] "$OUT/raw-".m.".tsv" using (\$3/1048576):13 every ::1 with linespoints lw 2 title "round trips / op, --mode=".m, \
     for [m in "$MODES"] "$OUT/raw-".m.".tsv" using (\$3/1048576):14 every ::1 axes x1y2 with linespoints title "client CPU µs / op, --mode=".m
unset multiplot
EOF
cat "$md"
log "results: $md, $raw, $OUT/growth.png"
if [ $KEEP = 0 ]; then
    "$TPCC" drop "${T[@]}" >/dev/null 2>&1 || rm -f "$DB_H"
fi
