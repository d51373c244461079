#!/bin/bash
# Integration test of ffb-oltp: a quick round of every workload on Firebird 3
# and 4 (the test servers of servers.env), checking that every event ran,
# no error was ignored, prepare loaded the rows, and the round trips per
# event (ffb_conn_round_trips over the timed part) equal the targets.
# usage: test_integration.sh FFB-OLTP
set -u
B=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if [ -f /work/state/servers.env ] && [ -z "${FFB_TEST_FB4_DSN:-}" ]; then
    set -a; . /work/state/servers.env; set +a
fi
# Round trips per event (warm: statements prepared before the clock):
#   point_select 1      execute + first fetch (implicit tx kept open)
#   read_only 15        lazy start rides the first select; 14 selects; commit
#   read_write 19       14 selects + 4 DML (row count in the execute's write) + commit
#   write_only 5        4 DML (start rides the first) + commit
#   update/delete 1     start + execute + count + commit in one write
#   insert 1            start + queued execute immediate + commit in one write
#   select_random_* 1   execute + fetch in the implicit tx
declare -A RT=([oltp_point_select]=1.00 [oltp_read_only]=15.00
    [oltp_read_write]=19.00 [oltp_write_only]=5.00 [oltp_update_index]=1.00
    [oltp_update_non_index]=1.00 [oltp_delete]=1.00 [oltp_insert]=1.00
    [select_random_points]=1.00 [select_random_ranges]=1.00)
EV=40
for srv in FB3 FB4; do
    dsnv=FFB_TEST_${srv}_DSN dirv=FFB_TEST_${srv}_DBDIR
    if [ -z "${!dsnv:-}" ]; then
        bad "$srv: no server in the environment (servers.env)"; continue
    fi
    hp=${!dsnv%%:*}
    dsn="$hp:${!dirv}/oltp-test-$$.fdb"
    o=(--dsn="$dsn" --user="${FFB_TEST_FB4_USER:-SYSDBA}" --password=masterkey)
    if ! "$B" oltp_read_write createdb "${o[@]}" >/dev/null; then
        bad "$srv: createdb"; continue
    fi
    if "$B" oltp_read_write prepare "${o[@]}" --tables=2 --table-size=500 \
        >/dev/null 2>&1; then ok; else bad "$srv: prepare"; fi
    for w in oltp_point_select oltp_read_only oltp_read_write oltp_write_only \
        oltp_update_index oltp_update_non_index oltp_delete oltp_insert \
        select_random_points select_random_ranges; do
        t=2; case $w in select_random_*) t=1;; esac
        out=$("$B" $w run "${o[@]}" --tables=$t --table-size=500 --events=$EV \
            --time=0 --rand-seed=11 2>&1)
        ev=$(sed -n 's/^    total number of events: *//p' <<<"$out")
        ie=$(sed -n 's/^    ignored errors: *\([0-9]*\).*/\1/p' <<<"$out")
        rt=$(sed -n 's/^round trips per event: *//p' <<<"$out")
        if [ "$ev" = $EV ] && [ "$ie" = 0 ] && [ "$rt" = "${RT[$w]}" ] &&
            ! grep -q FATAL <<<"$out"; then
            ok
        else
            bad "$srv $w: events=$ev ignored=$ie rt=$rt (want $EV 0 ${RT[$w]})"
            grep FATAL <<<"$out"
        fi
    done
    # bulk_insert: its own tables, one per thread, batches of 1000 rows
    "$B" oltp_read_write cleanup "${o[@]}" --tables=2 >/dev/null 2>&1
    "$B" bulk_insert prepare "${o[@]}" --threads=2 >/dev/null 2>&1 || bad "$srv bulk prepare"
    out=$("$B" bulk_insert run "${o[@]}" --threads=2 --events=2500 --time=0 2>&1)
    if grep -q '^    total number of events: *2500$' <<<"$out" &&
        ! grep -q FATAL <<<"$out"; then ok; else bad "$srv bulk_insert: $out"; fi
    "$B" bulk_insert cleanup "${o[@]}" --threads=2 >/dev/null 2>&1
    "$B" oltp_read_write dropdb "${o[@]}" >/dev/null 2>&1
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
