#!/bin/bash
# The quick round of the REST benchmarks (suite restbench, in CI): on
# Firebird 4 (the test servers of servers.env), both datasets into fresh
# databases (bookstore at --scale 20), two ffb-rest (bookstore, Chinook)
# with Server-Timing, then every scenario of ffb-rest-load - FirebirdREST's
# 14 and the 12 k6 ones, REST and the direct twin - for 0.4 s after a
# 0.3 s warm-up with 2 clients, every answer checked, and -check-rt: every
# measured request's round trips (Server-Timing, and libfastfb's counter
# for the direct twin) equal the REST issue's target: 1 for every read
# (embeds included), for single and bulk writes and for RPC; none for
# OPTIONS; GETAllEmbed 4..10 (6 when idle, up to 8 under load; reported
# by the tool: its 3,503 track rows take more than the first fetch). The databases are dropped at the end.
# Firebird 3 is left out to keep the round short (about 45 s on FB4).
# usage: test_load.sh FFB-REST-LOAD FFB-REST SEED CHINOOK_GEN
set -u
LOAD=$1 REST=$2 SEED=$3 CHINOOK=$4
if [ -f /work/state/servers.env ] && [ -z "${FFB_TEST_FB4_DSN:-}" ]; then
    set -a; . /work/state/servers.env; set +a
fi
if [ -z "${FFB_TEST_FB4_DSN:-}" ]; then
    echo "no FB4 server in the environment (servers.env)"
    [ "${FFB_TEST_REQUIRE_SERVER:-0}" = 1 ] && exit 1
    exit 77
fi
export ISC_USER=${FFB_TEST_FB4_USER:-SYSDBA}
export ISC_PASSWORD=${FFB_TEST_FB4_PASSWORD:-masterkey}
host=${FFB_TEST_FB4_HOST:-127.0.0.1} port=${FFB_TEST_FB4_PORT:-3050}
dir=$FFB_TEST_FB4_DBDIR
tmp=$(mktemp -d)
book=$dir/ffbtest_restload_fb4_$$_book.fdb
chin=$dir/ffbtest_restload_fb4_$$_chinook.fdb
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    "$LOAD" -drop-db "$host/$port:$book" 2>/dev/null
    "$LOAD" -drop-db "$host/$port:$chin" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

"$SEED" -q --scale 20 "$host/$port:$book" || { echo "FAIL: seed"; exit 1; }
"$CHINOOK" -q "$host/$port:$chin" || { echo "FAIL: chinook_gen"; exit 1; }
. "$(dirname "$0")/lib.sh"
rest_grant_roles "$host/$port:$book" WEB_USER WEB_ANON
rest_grant_roles "$host/$port:$chin" WEB_USER WEB_ANON POSTGRES
rest_start book "/$book" "$host" "$port" 2 auto
book_url=$url book_pid=${pids[-1]}
rest_start k6 "/$chin" "$host" "$port" 2 auto
k6_url=$url k6_pid=${pids[-1]}

"$LOAD" -url "$book_url" -k6-url "$k6_url" -server-pid "$book_pid" \
    -k6-server-pid "$k6_pid" -direct "$host/$port:$book" \
    -k6-direct "$host/$port:$chin" -scale 20 -c 2 -d 0.4 -warmup 0.3 \
    -check-rt -label "CI quick round, FB4"
rc=$?
# the checks can fail: told the wrong scale (books 1..10000 instead of
# 1..5000), row by primary key must see wrong answers and exit 1
out=$("$LOAD" -url "$book_url" -direct "$host/$port:$book" -scale 10 -c 1 \
    -d 0.2 -warmup 0 -only 1 2>&1)
if [ $? = 1 ] && grep -q "ERROR row by primary key .*rows, expected 1" <<<"$out" &&
    grep -q "ERROR row by primary key direct .*rows, expected 1" <<<"$out"; then
    echo "ok: a wrong answer fails the run (REST and direct)"
else
    echo "FAIL: wrong answers were not reported:"; echo "$out"; rc=1
fi
for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || { echo "FAIL: an ffb-rest died"; rc=1; }
done
[ $rc = 0 ] || { echo "FAIL: ffb-rest-load"; tail -5 "$tmp"/*.log; }
exit $rc
