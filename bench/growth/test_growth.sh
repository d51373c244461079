#!/bin/bash
# The growth test's quick round (suite 'growth'): ffb-tpcc on Firebird 3 and
# 4 (the shared test servers of servers.env) at a tiny scale (1/100: 1,000
# items, 30 customers and orders per district). Loads one warehouse, grows to
# two into the indexed tables, checks the TPC-C consistency conditions and
# the row counts, runs the mix on one terminal (no conflicts, so the round
# trips are exact) and on four (conflicts retried, totals checked), and
# asserts the round trips per transaction type; a corrupted total must then
# fail the check.
# usage: test_growth.sh FFB-TPCC
set -u
B=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if [ -f /work/state/servers.env ] && [ -z "${FFB_TEST_FB4_DSN:-}" ]; then
    set -a; . /work/state/servers.env; set +a
fi
# field NAME LINE: the value of NAME=... in a RESULT line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
for srv in FB3 FB4; do
    dsnv=FFB_TEST_${srv}_DSN dirv=FFB_TEST_${srv}_DBDIR
    if [ -z "${!dsnv:-}" ]; then
        bad "$srv: no server in the environment (servers.env)"; continue
    fi
    hp=${!dsnv%%:*}
    o=(--dsn="$hp:${!dirv}/growth-test-$$.fdb" --user=SYSDBA --password=masterkey --quiet)
    "$B" drop "${o[@]}" >/dev/null 2>&1
    # load 1 warehouse into bare tables (indexes after), then grow to 2
    for w in 1 2; do
        out=$("$B" load "${o[@]}" --warehouses=$w --scale=100 --threads=2 2>&1)
        if [ $? = 0 ] && grep -q "^RESULT load warehouses=$w " <<<"$out"; then ok
        else bad "$srv load to $w warehouses: $out"; fi
        out=$("$B" check "${o[@]}" --full 2>&1)
        if [ $? = 0 ] && grep -q '^RESULT check warehouses='$w' ok=1$' <<<"$out" &&
            [ "$(grep -cE ' ok( \(|$)' <<<"$out")" = 10 ]; then ok
        else bad "$srv check after $w warehouses: $out"; fi
    done
    # One terminal: no conflicts, every transaction's round trips exact.
    out=$("$B" run "${o[@]}" --mode=client --terminals=1 --transactions=150 --seed=7 2>&1)
    if [ $? = 0 ] && grep -q '^checks: every answer and the totals are right$' <<<"$out" &&
        grep -q '^RESULT run mode=client ' <<<"$out"; then ok
    else bad "$srv run --mode=client, 1 terminal: $out"; fi
    # Round trips per type (ffb_conn_stats().round_trips around each
    # transaction; statements prepared before; the lazy transaction start
    # rides the first statement):
    #   order_status 4   customer (by id or by name), last order, its lines, commit
    #   stock_level  3   district's d_next_o_id, the joined count, commit
    #   delivery    41   10 x (new_order delete..returning, orders update..
    #                    returning, order_line update, customer update) + commit
    #                    (every district has an undelivered order at this size)
    #   payment    5/6   warehouse and district updates..returning, customer
    #                    update..returning, history insert, commit; by last
    #                    name one more select (60%)
    #   new_order 5+3n   warehouse+customer select, district update..returning,
    #                    orders and new_order inserts, per line (n = 5..15) item
    #                    select + stock update..returning + line insert, commit;
    #                    3n+3 for the 1% rolled back at an unused item
    declare -A PER=([order_status]=4 [stock_level]=3 [delivery]=41)
    for x in new_order payment order_status delivery stock_level; do
        l=$(grep "^RESULT tx type=$x " <<<"$out")
        n=$(field count "$l") rt=$(field rt "$l") ex=$(field rt_expected "$l")
        ck=$(field rt_checked_ops "$l") re=$(field retries "$l")
        good=1
        [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$rt" = "$ex" ] && [ "$ck" = "$n" ] &&
            [ "$re" = 0 ] || good=0
        if [ -n "${PER[$x]:-}" ] && [ "$good" = 1 ]; then
            [ "$rt" = $((PER[$x] * n)) ] || good=0
        fi
        case $x in
        payment) [ "$good" = 1 ] && [ "$rt" -ge $((5 * n)) ] && [ "$rt" -le $((6 * n)) ] || good=0 ;;
        new_order) [ "$good" = 1 ] && [ "$rt" -ge $((18 * n)) ] && [ "$rt" -le $((50 * n)) ] || good=0 ;;
        esac
        if [ $good = 1 ]; then ok; else bad "$srv $x round trips: $l (want ${PER[$x]:-formula} per op)"; fi
    done
    # --mode=procs (the default), one terminal: every transaction is one
    # procedure call whose start, call and commit go in one write: exactly
    # 1 round trip each, rolled-back new orders included; the totals checked.
    out=$("$B" run "${o[@]}" --terminals=1 --transactions=150 --seed=7 2>&1)
    if [ $? = 0 ] && grep -q '^checks: every answer and the totals are right$' <<<"$out" &&
        grep -q '^RESULT run mode=procs ' <<<"$out"; then ok
    else bad "$srv run --mode=procs, 1 terminal: $out"; fi
    for x in new_order payment order_status delivery stock_level; do
        l=$(grep "^RESULT tx type=$x " <<<"$out")
        n=$(field count "$l") rt=$(field rt "$l") ex=$(field rt_expected "$l")
        if [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$rt" = "$n" ] && [ "$ex" = "$n" ]; then ok
        else bad "$srv procs $x round trips: $l (want 1 per op)"; fi
    done
    # Four terminals on two warehouses, both modes: conflicts retried,
    # totals checked by the run (payments = w_ytd delta, new orders =
    # d_next_o_id delta, new_order rows = new - delivered).
    for m in client procs; do
        out=$("$B" run "${o[@]}" --mode=$m --terminals=4 --transactions=40 --seed=9 2>&1)
        if [ $? = 0 ] && grep -q "^RESULT run mode=$m .* ok=1$" <<<"$out"; then ok
        else bad "$srv run --mode=$m, 4 terminals: $out"; fi
    done
    out=$("$B" check "${o[@]}" --full 2>&1)
    if [ $? = 0 ] && grep -q 'ok=1$' <<<"$out"; then ok; else bad "$srv final check: $out"; fi
    # A wrong total must fail: move one warehouse's w_ytd by a cent (with
    # the host's isql) and check must name condition 1 and exit 1.
    if command -v isql-fb >/dev/null; then
        (cd / && env -u FIREBIRD timeout 30 isql-fb -b -q -user SYSDBA -password masterkey \
            <<<"connect '$hp:${!dirv}/growth-test-$$.fdb'; update warehouse set w_ytd = w_ytd + 0.01 where w_id = 2; commit;") >/dev/null 2>&1
        out=$("$B" check "${o[@]}" 2>&1)
        if [ $? = 1 ] && grep -q '^w_ytd = sum(d_ytd) (TPC-C condition 1) *FAILED$' <<<"$out"; then ok
        else bad "$srv corrupted w_ytd not detected: $out"; fi
    else
        bad "$srv: no isql-fb for the corruption check"
    fi
    "$B" drop "${o[@]}" >/dev/null 2>&1 || bad "$srv drop"
done
# Bad input: a clear error, exit 2.
"$B" run --dsn=x --terminals=abc >/dev/null 2>&1; [ $? = 2 ] && ok || bad "bad option not refused with 2"
# run on a database that does not exist: exit 1, and nothing is created
if [ -n "${FFB_TEST_FB4_DSN:-}" ]; then
    miss="${FFB_TEST_FB4_DSN%%:*}:$FFB_TEST_FB4_DBDIR/growth-missing-$$.fdb"
    "$B" run --dsn="$miss" --password=masterkey >/dev/null 2>&1; rc=$?
    if [ $rc = 1 ] && ! "$B" drop --dsn="$miss" --password=masterkey >/dev/null 2>&1; then ok
    else bad "run on a missing database: exit $rc, or it was created"; fi
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
