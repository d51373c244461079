#!/usr/bin/env bash
# ffb-oltp's suite, after the sysbench Firebird Edition's run_benchmarks.sh:
# its order (point_select, read_only, read_write, insert, delete,
# update_index, update_non_index, select_random_points, select_random_ranges,
# bulk_insert; plus write_only), its sizes scaled by options, each workload
# run twice and the second run quoted, at every proxy delay (ffb-proxy in
# front of the server; 0 ms = through the proxy without delay). Where
# PostgreSQL 15 and Debian's sysbench are installed, the same sizes run
# against a private PostgreSQL on a loopback port (context, not a contest).
# Raw outputs go to bench/results/oltp/<timestamp>/.
#
#   bash bench/oltp/run_suite.sh [--tables 4] [--table-size 10000]
#        [--threads 4] [--time 10] [--delays "0 2 10"] [--workloads "..."]
#        [--no-pg] [--build DIR] [SERVERS_ENV]
#
# Default server: fb4 of servers.env ($FFB_SERVER_STATE, /work/state, or
# build-servers-state/); with none, the test servers are installed and
# started in build-servers-state/ (tests/servers/fbservers.sh, needs root).
# Drivers: only --driver=libfastfb exists yet (the fbclient driver is not
# written), so each workload is run for libfastfb only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tables=4 size=10000 threads=4 time=10 delays="0 2 10" pg=1
build=$root/build state=${FFB_SERVER_STATE:-}
workloads="oltp_point_select oltp_read_only oltp_read_write oltp_write_only
 oltp_insert oltp_delete oltp_update_index oltp_update_non_index
 select_random_points select_random_ranges bulk_insert"
while [ $# -gt 0 ]; do
    case "$1" in
    --tables) tables=$2; shift ;;
    --table-size) size=$2; shift ;;
    --threads) threads=$2; shift ;;
    --time) time=$2; shift ;;
    --delays) delays=$2; shift ;;
    --workloads) workloads=$2; shift ;;
    --no-pg) pg=0 ;;
    --build) build=$2; shift ;;
    -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "run_suite.sh: unknown option $1" >&2; exit 2 ;;
    *) state=$1 ;;
    esac
    shift
done
[ -n "$state" ] || { [ -f /work/state/servers.env ] && state=/work/state; } ||
    state=$root/build-servers-state
[ -d "$state" ] && state=$state/servers.env
if [ ! -f "$state" ]; then
    echo "== no servers.env: installing and starting the test servers" >&2
    bash "$root/tests/servers/fbservers.sh" install
    bash "$root/tests/servers/fbservers.sh" start "$root/build-servers-state"
    state=$root/build-servers-state/servers.env
fi
set -a; . "$state"; set +a
[ -x "$build/bench/ffb-oltp" ] || {
    [ -d "$build" ] || (cd "$root" && CC=gcc meson setup "$build" --buildtype=release)
    ninja -C "$build" bench/ffb-oltp bench/ffb-proxy
}
B=$build/bench/ffb-oltp P=$build/bench/ffb-proxy
ts=$(date -u +%Y%m%dT%H%M%SZ)
out=$root/bench/results/oltp/$ts
mkdir -p "$out"
host=${FFB_TEST_FB4_HOST:-127.0.0.1} port=${FFB_TEST_FB4_PORT:?no fb4}
path=$FFB_TEST_FB4_DBDIR/ffb-oltp-suite.fdb
auth=(--user="${FFB_TEST_FB4_USER:-SYSDBA}" --password="${FFB_TEST_FB4_PASSWORD:-masterkey}")
{
    echo "# ffb-oltp suite $ts: tables=$tables table-size=$size threads=$threads time=$time"
    echo "# server: fb4 $host:$port ($path); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/summary.txt"

sizes() { # the Edition's per-workload sizes
    case $1 in
    select_random_*) echo "--tables=1 --table-size=$size --threads=$threads --time=$time" ;;
    bulk_insert) echo "--threads=$threads --events=10000 --time=0" ;;
    *) echo "--tables=$tables --table-size=$size --threads=$threads --time=$time" ;;
    esac
}

run_fb() { # delay workload
    local d=$1 w=$2 pp pid
    coproc PX { exec "$P" --upstream "$host:$port" --port 0 --delay-ms "$d" \
        --exit-on-stdin-eof --quiet; }
    read -r _ pp <&"${PX[0]}"
    pid=$PX_PID
    local dsn="127.0.0.1/$pp:$path" o
    read -ra o <<<"$(sizes "$w")"
    "$B" "$w" createdb --dsn="$dsn" "${auth[@]}" >/dev/null
    "$B" "$w" prepare --dsn="$dsn" "${auth[@]}" "${o[@]}" 2>/dev/null >/dev/null
    for pass in 1 2; do
        "$B" "$w" run --dsn="$dsn" "${auth[@]}" "${o[@]}" \
            >"$out/benchmark_libfastfb_${w}_${d}ms_run$pass.txt" 2>&1 || true
    done
    "$B" "$w" dropdb --dsn="$dsn" "${auth[@]}" >/dev/null 2>&1 || true
    exec {PX[1]}>&-
    wait "$pid" 2>/dev/null || true
    local f=$out/benchmark_libfastfb_${w}_${d}ms_run2.txt
    printf '%-24s %4s ms  libfastfb  tps %10s  rt/event %6s  cpu us/event %8s%s\n' "$w" "$d" \
        "$(sed -n 's/^    events\/s (eps): *//p' "$f")" \
        "$(sed -n 's/^round trips per event: *//p' "$f")" \
        "$(sed -n 's/^client CPU us per event: *//p' "$f")" \
        "$(grep -q FATAL "$f" && echo '  FATAL (see file)')" | tee -a "$out/summary.txt"
}

for d in $delays; do
    for w in $workloads; do
        run_fb "$d" "$w"
    done
done

# ---- PostgreSQL 15 context run (Debian's sysbench 1.0.20) -------------------
pgbin=/usr/lib/postgresql/15/bin
if [ "$pg" = 1 ] && [ -x "$pgbin/postgres" ] && command -v sysbench >/dev/null; then
    pgdir=$(mktemp -d /tmp/ffb-oltp-pg.XXXXXX)
    pguser=$(id -un); runas=()
    if [ "$(id -u)" = 0 ]; then # never the system cluster; a normal user
        pguser=nobody; chown nobody "$pgdir"; runas=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    fi
    pgport=$((25432 + RANDOM % 1000))
    "${runas[@]}" "$pgbin/initdb" -D "$pgdir/data" -U sbtest -A trust >/dev/null
    "${runas[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
        -o "-p $pgport -k $pgdir -c listen_addresses=127.0.0.1 -c shared_buffers=128MB" start >/dev/null
    "${runas[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U sbtest sbtest
    for w in $workloads; do
        [ "$w" = oltp_write_only ] || [ -f "/usr/share/sysbench/$w.lua" ] || continue
        read -ra o <<<"$(sizes "$w")"
        so=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$pgport"
            --pgsql-user=sbtest --pgsql-db=sbtest --rand-type=uniform "${o[@]}")
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" cleanup >/dev/null 2>&1 || true
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" prepare >/dev/null 2>&1
        for pass in 1 2; do
            sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" run \
                >"$out/benchmark_pgsql_${w}_run$pass.txt" 2>&1 || true
        done
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" cleanup >/dev/null 2>&1 || true
        f=$out/benchmark_pgsql_${w}_run2.txt
        # 1.0.20: "transactions: N (X per sec.)"
        printf '%-24s %4s ms  pgsql      tps %10s\n' "$w" 0 \
            "$(sed -n 's/^    transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' "$f")" | tee -a "$out/summary.txt"
    done
    "${runas[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m fast stop >/dev/null
    rm -rf "$pgdir"
fi
echo "results: $out"
