#!/usr/bin/env bash
# ffb-oltp's suite, after the sysbench Firebird Edition's run_benchmarks.sh:
# its order (point_select, read_only, read_write, insert, delete,
# update_index, update_non_index, select_random_points, select_random_ranges,
# bulk_insert; plus write_only), its sizes scaled by options. Per workload
# the data is prepared once; then, at every proxy delay (ffb-proxy in front
# of the server; 0 ms = through the proxy without delay), the drivers
# alternate - libfastfb, fbclient, libfastfb, fbclient (fbclient first on
# every other workload) - and only each driver's second run is quoted (the
# Edition's rule). read_only / read_write / write_only also run twice in
# libfastfb's --mode=pipelined (its own table). Round trips per event come
# from the proxy's turn counter for both drivers (libfastfb's own counter
# is printed beside it in the raw files). Where PostgreSQL 15 and Debian's
# sysbench are installed, the same sizes run against a private PostgreSQL
# on a loopback port, without the proxy (context, not a contest).
# Raw outputs and summary.md go to bench/results/oltp/<timestamp>/.
#
#   bash bench/oltp/run_suite.sh [--tables 4] [--table-size 10000]
#        [--threads 4] [--time 10] [--delays "0 2 10"] [--workloads "..."]
#        [--drivers "libfastfb fbclient"] [--bulk-events 10000]
#        [--no-pipelined] [--no-pg]
#        [--build DIR] [SERVERS_ENV]
#
# Default server: fb4 of servers.env ($FFB_SERVER_STATE, /work/state, or
# build-servers-state/); with none, the test servers are installed and
# started in build-servers-state/ (tests/servers/fbservers.sh, needs root);
# servers of a servers.env that no longer answer are started again. Servers
# this script started are stopped at its end.
# fbclient is Debian's libfbclient2 (Firebird 3.0 client, dlopen'ed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tables=4 size=10000 threads=4 time=10 delays="0 2 10" pg=1 pipe=1 bulk=10000
drivers="libfastfb fbclient"
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
    --drivers) drivers=$2; shift ;;
    --bulk-events) bulk=$2; shift ;;
    --no-pipelined) pipe=0 ;;
    --no-pg) pg=0 ;;
    --build) build=$2; shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    -*) echo "run_suite.sh: unknown option $1" >&2; exit 2 ;;
    *) state=$1 ;;
    esac
    shift
done
[ -n "$state" ] || { [ -f /work/state/servers.env ] && state=/work/state; } ||
    state=$root/build-servers-state
[ -d "$state" ] && state=$state/servers.env
FBS=$root/tests/servers/fbservers.sh
started=""
if [ ! -f "$state" ]; then
    echo "== no servers.env: installing and starting the test servers" >&2
    bash "$FBS" install
    bash "$FBS" start "$root/build-servers-state"
    state=$root/build-servers-state/servers.env started=$root/build-servers-state
elif ! bash "$FBS" probe "$(dirname "$state")" >&2; then
    # a servers.env left by servers that are gone (a reboot, a stop):
    # start them again in the same directory
    echo "== the servers of $state do not answer: starting them" >&2
    bash "$FBS" start "$(dirname "$state")"
    started=$(dirname "$state")
fi
# servers this run started are stopped when it ends
stop_servers() { [ -z "$started" ] || bash "$FBS" stop "$started" >/dev/null 2>&1 || true; }
trap stop_servers EXIT
set -a; . "$state"; set +a
[ -x "$build/bench/ffb-oltp" ] && [ -x "$build/bench/ffb-proxy" ] || {
    [ -d "$build" ] || (cd "$root" && CC=gcc meson setup "$build" --buildtype=release)
    ninja -C "$build" bench/ffb-oltp bench/ffb-proxy
}
B=$build/bench/ffb-oltp P=$build/bench/ffb-proxy
ts=$(date -u +%Y%m%dT%H%M%SZ)
out=$root/bench/results/oltp/$ts
mkdir -p "$out"
host=${FFB_TEST_FB4_HOST:-127.0.0.1} port=${FFB_TEST_FB4_PORT:?no fb4}
path=$FFB_TEST_FB4_DBDIR/ffb-oltp-suite-$ts-$$.fdb # unique: runs may overlap
auth=(--user="${FFB_TEST_FB4_USER:-SYSDBA}" --password="${FFB_TEST_FB4_PASSWORD:-masterkey}")
admin=(--dsn="$host/$port:$path" "${auth[@]}")
{
    echo "# ffb-oltp suite $ts: tables=$tables table-size=$size threads=$threads time=$time delays=$delays"
    echo "# server: fb4 $host:$port ($path); machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/summary.txt"

sizes() { # the Edition's per-workload sizes
    case $1 in
    select_random_*) echo "--tables=1 --table-size=$size --threads=$threads --time=$time" ;;
    bulk_insert) echo "--threads=$threads --events=$bulk --time=0" ;;
    *) echo "--tables=$tables --table-size=$size --threads=$threads --time=$time" ;;
    esac
}

# One ffb-proxy per delay, each with its stats file (turns counted there).
declare -A PPORT PXPID PSTATS
for d in $delays; do
    s=$out/proxy_${d}ms.stats po=$out/proxy_${d}ms.out
    "$P" --upstream "$host:$port" --port 0 --delay-ms "$d" --stats-file "$s" \
        >"$po" 2>&1 &
    PXPID[$d]=$! PSTATS[$d]=$s
    for _ in $(seq 200); do grep -q '^port ' "$po" && break; sleep 0.05; done
    PPORT[$d]=$(awk '/^port /{print $2; exit}' "$po")
    [ -n "${PPORT[$d]}" ] || { echo "ffb-proxy did not start: $(cat "$po")" >&2; exit 1; }
done
cleanup_proxies() { for d in $delays; do kill "${PXPID[$d]}" 2>/dev/null || true; done; }
trap 'cleanup_proxies; stop_servers' EXIT

field() { sed -n "s/^$1: *//p" "$2"; }
row() { # tag delay workload file
    local f=$4
    printf '%-10s %-24s %4s ms  tps %10s  rt/event %6s  cpu us/event %8s%s\n' "$1" "$3" "$2" \
        "$(field '    events\/s (eps)' "$f")" "$(field 'round trips per event' "$f")" \
        "$(field 'client CPU us per event' "$f")" \
        "$(grep -q FATAL "$f" && echo '  FATAL (see file)')" | tee -a "$out/summary.txt"
}

run_one() { # delay workload driver mode pass
    local d=$1 w=$2 drv=$3 mode=$4 pass=$5 o tag=$3
    [ "$mode" = pipelined ] && tag=pipelined
    read -ra o <<<"$(sizes "$w")"
    local f=$out/benchmark_${tag}_${w}_${d}ms_run$pass.txt
    if [ "$w" = bulk_insert ]; then # it appends ids 1, 2, ...: new tables each run
        "$B" "$w" cleanup "${admin[@]}" "${o[@]}" >/dev/null 2>&1 || true
        "$B" "$w" prepare "${admin[@]}" "${o[@]}" >/dev/null 2>&1
    fi
    "$B" "$w" run --dsn="127.0.0.1/${PPORT[$d]}:$path" "${auth[@]}" "${o[@]}" \
        --driver="$drv" --mode="$mode" --proxy-pid="${PXPID[$d]}" \
        --proxy-stats="${PSTATS[$d]}" >"$f" 2>&1 || true
    [ "$pass" = 2 ] && row "$tag" "$d" "$w" "$f"
    return 0
}

"$B" oltp_read_write createdb "${admin[@]}" >/dev/null
i=0
for w in $workloads; do
    read -ra o <<<"$(sizes "$w")"
    "$B" "$w" prepare "${admin[@]}" "${o[@]}" >/dev/null 2>&1
    order=$drivers
    [ $((i % 2)) = 1 ] && order=$(tr ' ' '\n' <<<"$drivers" | tac | tr '\n' ' ')
    for d in $delays; do
        for pass in 1 2; do
            for drv in $order; do run_one "$d" "$w" "$drv" sysbench $pass; done
        done
        case $w in oltp_read_only | oltp_read_write | oltp_write_only)
            if [ $pipe = 1 ]; then
                for pass in 1 2; do run_one "$d" "$w" libfastfb pipelined $pass; done
            fi ;;
        esac
    done
    "$B" "$w" cleanup "${admin[@]}" "${o[@]}" >/dev/null 2>&1 || true
    i=$((i + 1))
done
"$B" oltp_read_write dropdb "${admin[@]}" >/dev/null 2>&1 || true

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
        [ -f "/usr/share/sysbench/$w.lua" ] || continue
        read -ra o <<<"$(sizes "$w")"
        so=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$pgport"
            --pgsql-user=sbtest --pgsql-db=sbtest --rand-type=uniform "${o[@]}")
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" cleanup >/dev/null 2>&1 || true
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" prepare >/dev/null 2>&1
        for pass in 1 2; do
            if [ "$w" = bulk_insert ] && [ $pass = 2 ]; then # new tables: it appends ids 1, 2, ...
                sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" cleanup >/dev/null 2>&1 || true
                sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" prepare >/dev/null 2>&1
            fi
            sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" run \
                >"$out/benchmark_pgsql_${w}_run$pass.txt" 2>&1 || true
        done
        sysbench "/usr/share/sysbench/$w.lua" "${so[@]}" cleanup >/dev/null 2>&1 || true
        f=$out/benchmark_pgsql_${w}_run2.txt
        # 1.0.20: "transactions: N (X per sec.)"
        printf '%-10s %-24s %4s ms  tps %10s\n' pgsql "$w" 0 \
            "$(sed -n 's/^    transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' "$f")" | tee -a "$out/summary.txt"
    done
    "${runas[@]}" "$pgbin/pg_ctl" -D "$pgdir/data" -m fast stop >/dev/null
    rm -rf "$pgdir"
fi

# ---- side by side --------------------------------------------------------
python3 - "$out" "$delays" "$workloads" >"$out/summary.md" <<'PY' || true
import re, sys, os
out, delays, workloads = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def get(tag, w, d=None):
    f = os.path.join(out, f"benchmark_{tag}_{w}_{d}ms_run2.txt" if d is not None
                     else f"benchmark_{tag}_{w}_run2.txt")
    if not os.path.exists(f): return None
    t = open(f).read()
    if "FATAL" in t: return "FATAL"
    def num(pat):
        m = re.search(pat, t, re.M)
        return float(m.group(1)) if m else None
    tps = num(r"^    events/s \(eps\):\s*([0-9.]+)") or num(r"^    transactions:\s*\d+\s*\(([0-9.]+) per sec")
    return dict(tps=tps, rt=num(r"^round trips per event:\s*([0-9.]+)"),
                cpu=num(r"^client CPU us per event:\s*([0-9.]+)"))
def f(v, p=1): return "-" if v is None else f"{v:.{p}f}"
print("| Workload | delay | libfastfb TPS | fbclient TPS | ratio | RT/event libfastfb | RT/event fbclient | RT ratio | CPU µs/event libfastfb | CPU µs/event fbclient | PostgreSQL 15 TPS |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for w in workloads:
    for d in delays:
        a, b = get("libfastfb", w, d), get("fbclient", w, d)
        pg = get("pgsql", w) if d == delays[0] else None
        if a == "FATAL" or b == "FATAL":
            print(f"| {w} | {d} ms | {'FATAL' if a=='FATAL' else ''} | {'FATAL' if b=='FATAL' else ''} | | | | | | | |"); continue
        a = a or {}; b = b or {}
        r = a["tps"] / b["tps"] if a.get("tps") and b.get("tps") else None
        rr = b["rt"] / a["rt"] if a.get("rt") and b.get("rt") else None
        print(f"| {w} | {d} ms | {f(a.get('tps'))} | {f(b.get('tps'))} | {f(r,2)} | {f(a.get('rt'),2)} | {f(b.get('rt'),2)} | {f(rr,2)} | {f(a.get('cpu'))} | {f(b.get('cpu'))} | {f((pg or {}).get('tps') if isinstance(pg, dict) else None)} |")
print()
print("| Workload (pipelined) | delay | pipelined TPS | RT/event | CPU µs/event | sysbench-mode libfastfb TPS | ratio |")
print("|---|---|---|---|---|---|---|")
for w in workloads:
    for d in delays:
        p, a = get("pipelined", w, d), get("libfastfb", w, d)
        if not isinstance(p, dict): continue
        r = p["tps"] / a["tps"] if isinstance(a, dict) and a.get("tps") and p.get("tps") else None
        print(f"| {w} | {d} ms | {f(p['tps'])} | {f(p['rt'],2)} | {f(p['cpu'])} | {f(a.get('tps') if isinstance(a, dict) else None)} | {f(r,2)} |")
PY
cat "$out/summary.md"
echo "results: $out"
