#!/bin/bash
# Integration test of ffb-oltp: a quick round of every workload on Firebird 3
# and 4 (the test servers of servers.env), with both drivers and in
# pipelined mode, every connection through ffb-proxy (no delay) so the
# round trips are counted on the wire too. Checks that every event ran, no
# error was ignored, every answer passed the tool's checks (no FATAL), and
# the round trips per event: libfastfb's own counter and the proxy's turns
# must both equal the targets; fbclient has no counter, so its targets are
# checked against the proxy's turns.
# usage: test_integration.sh FFB-OLTP FFB-PROXY
set -u
B=$1 P=${2:-}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if [ -f /work/state/servers.env ] && [ -z "${FFB_TEST_FB4_DSN:-}" ]; then
    set -a; . /work/state/servers.env; set +a
fi
[ -n "$P" ] && [ -x "$P" ] || { echo "FAIL: no ffb-proxy (needs libuv)"; exit 1; }
EV=20
# libfastfb, sysbench mode (warm: statements prepared before the clock):
#   point_select 1      execute + first fetch (implicit tx kept open, its
#                       lazy start rides the first execute)
#   read_only 15        lazy start rides the first select; 14 selects; commit
#   read_write 19       14 selects + 4 DML (row count in the execute's answer) + commit
#   write_only 5        4 DML (start rides the first) + commit
#   update/delete 1     start + execute + commit in one write
#   insert 1            start + queued execute immediate + commit in one write
#   select_random_* 1   execute + fetch in the implicit tx
declare -A RT=([oltp_point_select]=1.00 [oltp_read_only]=15.00
    [oltp_read_write]=19.00 [oltp_write_only]=5.00 [oltp_update_index]=1.00
    [oltp_update_non_index]=1.00 [oltp_delete]=1.00 [oltp_insert]=1.00
    [select_random_points]=1.00 [select_random_ranges]=1.00)
# fbclient 3.0 (ISC API; its lazy port defers the cursor close and sends
# the first fetch with the execute, but a transaction start and every DML's
# execute and row-count info wait for their answers):
#   point_select 1.05   execute+fetch per event, plus the implicit tx's start
#                       once over the 20 events (21 / 20)
#   read_only 16        start + 14 selects + commit
#   read_write 24       start + 14 selects + 4 x (execute + isc_dsql_sql_info) + commit
#   write_only 10       start + 4 x 2 + commit
#   update/delete 4     start + execute + sql_info + commit
#   insert 3            start + execute immediate + commit
#   select_random_* 1.05  as point_select
declare -A RTC=([oltp_point_select]=1.05 [oltp_read_only]=16.00
    [oltp_read_write]=24.00 [oltp_write_only]=10.00 [oltp_update_index]=4.00
    [oltp_update_non_index]=4.00 [oltp_delete]=4.00 [oltp_insert]=3.00
    [select_random_points]=1.05 [select_random_ranges]=1.05)
# libfastfb, pipelined: the event's 14 selects (and its 4 DML) with the
# lazy start in one write, one statement handle per select; then the
# commit, sent only when every answer passed: 2
declare -A RTP=([oltp_read_only]=2.00 [oltp_read_write]=2.00
    [oltp_write_only]=2.00)
field() { sed -n "s/^$1: *//p" <<<"$2"; }
end_proxy() { # stdin EOF ends it (--exit-on-stdin-eof)
    local pid=$PX_PID
    exec {PX[1]}>&-
    wait "$pid" 2>/dev/null
    rm -f "$st"
}
for srv in FB3 FB4; do
    dsnv=FFB_TEST_${srv}_DSN dirv=FFB_TEST_${srv}_DBDIR
    if [ -z "${!dsnv:-}" ]; then
        bad "$srv: no server in the environment (servers.env)"; continue
    fi
    hp=${!dsnv%%:*} st=$(mktemp /tmp/oltp-proxy.XXXXXX)
    coproc PX { exec "$P" --upstream "${hp%%/*}:${hp##*/}" --port 0 \
        --stats-file "$st" --exit-on-stdin-eof --quiet; }
    read -r _ pport <&"${PX[0]}"
    dsn="127.0.0.1/$pport:${!dirv}/oltp-test-$$.fdb"
    o=(--dsn="$dsn" --user="${FFB_TEST_FB4_USER:-SYSDBA}" --password=masterkey)
    pr=(--proxy-pid="$PX_PID" --proxy-stats="$st")
    if ! "$B" oltp_read_write createdb "${o[@]}" >/dev/null; then
        bad "$srv: createdb"; end_proxy; continue
    fi
    if "$B" oltp_read_write prepare "${o[@]}" --tables=2 --table-size=500 \
        >/dev/null 2>&1; then ok; else bad "$srv: prepare"; fi
    for drv in libfastfb fbclient pipelined; do
        for w in oltp_point_select oltp_read_only oltp_read_write oltp_write_only \
            oltp_update_index oltp_update_non_index oltp_delete oltp_insert \
            select_random_points select_random_ranges; do
            t=2; case $w in select_random_*) t=1;; esac
            d=(--driver="$drv") want=${RT[$w]} own=$want
            case $drv in
            fbclient) want=${RTC[$w]} own="" ;;
            pipelined) [ -n "${RTP[$w]:-}" ] || continue
                d=(--mode=pipelined) want=${RTP[$w]} own=$want ;;
            esac
            out=$("$B" $w run "${o[@]}" "${pr[@]}" "${d[@]}" --tables=$t \
                --table-size=500 --events=$EV --time=0 --rand-seed=11 2>&1)
            ev=$(field "    total number of events" "$out")
            ie=$(sed -n 's/^    ignored errors: *\([0-9]*\).*/\1/p' <<<"$out")
            rt=$(field "round trips per event" "$out")
            pt=$(field "proxy turns per event" "$out")
            [ -n "$own" ] || rt=$own
            if [ "$ev" = $EV ] && [ "$ie" = 0 ] && [ "$pt" = "$want" ] &&
                [ "$rt" = "$own" ] && ! grep -q FATAL <<<"$out"; then
                ok
            else
                bad "$srv $drv $w: events=$ev ignored=$ie rt=$rt proxy=$pt (want $EV 0 $want)"
                grep FATAL <<<"$out"
            fi
        done
    done
    # bulk_insert: its own tables, one per thread, batches of 1000 rows
    "$B" oltp_read_write cleanup "${o[@]}" --tables=2 >/dev/null 2>&1
    for drv in libfastfb fbclient; do
        "$B" bulk_insert prepare "${o[@]}" --threads=2 >/dev/null 2>&1 || bad "$srv bulk prepare"
        out=$("$B" bulk_insert run "${o[@]}" --driver=$drv --threads=2 --events=2500 --time=0 2>&1)
        if grep -q '^    total number of events: *2500$' <<<"$out" &&
            ! grep -q FATAL <<<"$out"; then ok; else bad "$srv $drv bulk_insert: $out"; fi
        "$B" bulk_insert cleanup "${o[@]}" --threads=2 >/dev/null 2>&1
    done
    "$B" oltp_read_write dropdb "${o[@]}" >/dev/null 2>&1
    end_proxy
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
