#!/usr/bin/env bash
# Runs @supabase/postgrest-js (the npm client, pinned in package-lock.json)
# against ffb-rest on each Firebird 3 and 4 instance of servers.env (fb3,
# fb4): makes this run's tables and routines with isql (names PJ<pid>_...),
# starts ffb-rest on a free port, runs test.mjs with node --test, stops the
# server (its exit status must be 0) and drops the objects.
#
#   run.sh <ffb-rest> [lsan.supp]      (meson test rest_postgrest_js)
#
# Without servers, node or node_modules (npm ci here) it skips (77), or
# fails when FFB_TEST_REQUIRE_SERVER=1. FFB_PGJS_TARGETS overrides the
# instance list (default "fb3 fb4").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rest=${1:?usage: run.sh <ffb-rest> [lsan.supp]}
supp=${2:-}
require=${FFB_TEST_REQUIRE_SERVER:-0}

skip() {
    echo "run.sh: $*" >&2
    if [ "$require" = 1 ]; then exit 1; fi
    exit 77
}

[ -n "${FFB_TEST_SERVERS:-}" ] || skip "no servers.env in the environment"
command -v node >/dev/null 2>&1 || skip "node not found"
[ -f "$here/node_modules/@supabase/postgrest-js/package.json" ] ||
    skip "node_modules missing: (cd $here && npm ci)"
isql=$(command -v isql-fb || command -v isql) || skip "isql-fb not found"
[ -x "$rest" ] || { echo "run.sh: $rest is not executable" >&2; exit 1; }

prefix="PJ$$"
tmp=$(mktemp -d)
srv_pid=""
made=()

sql_for() { sed "s/@P@/$prefix/g" "$here/$1.sql.in"; }

cleanup() {
    if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; fi
    for t in "${made[@]}"; do
        drop "$t" >/dev/null 2>&1
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

var() { local n="FFB_TEST_${1^^}_$2"; printf '%s' "${!n:-}"; }

isql_run() { # target file
    "$isql" -q -b -user "$(var "$1" USER)" -password "$(var "$1" PASSWORD)" \
        "$(var "$1" DSN)" -i "$2"
}
drop() { sql_for drop >"$tmp/drop.sql"; isql_run "$1" "$tmp/drop.sql"; }

free_port() {
    node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

fails=0
ran=0
for t in ${FFB_PGJS_TARGETS:-fb3 fb4}; do
    if [ -z "$(var "$t" DSN)" ]; then
        skip "servers.env has no $t instance"
    fi
    echo "=== $t ($(var "$t" VERSION).x, $(var "$t" DSN)) prefix $prefix"
    made+=("$t")
    sql_for schema >"$tmp/schema.sql"
    if ! isql_run "$t" "$tmp/schema.sql"; then
        echo "run.sh: $t: creating the objects failed" >&2
        fails=$((fails + 1))
        continue
    fi
    port=$(free_port)
    aport=$(free_port)
    log="$tmp/ffb-rest-$t.log"
    (
        PGRST_DB_URI="firebird://$(var "$t" USER):$(var "$t" PASSWORD)@$(var "$t" HOST):$(var "$t" PORT)/$(var "$t" DB)"
        export PGRST_DB_URI
        export PGRST_SERVER_HOST=127.0.0.1 PGRST_SERVER_PORT=$port
        export PGRST_ADMIN_SERVER_PORT=$aport PGRST_DB_POOL=2
        export PGRST_DB_TX_END=commit-allow-override PGRST_LOG_LEVEL=info
        if [ -n "$supp" ]; then
            export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp"
        fi
        exec "$rest"
    ) 2>"$log" &
    srv_pid=$!
    for _ in $(seq 300); do
        grep -q "listening on" "$log" && break
        kill -0 "$srv_pid" 2>/dev/null || break
        sleep 0.1
    done
    if ! grep -q "listening on" "$log"; then
        echo "run.sh: $t: ffb-rest did not start:" >&2
        cat "$log" >&2
        fails=$((fails + 1))
        kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=""
        continue
    fi
    ran=$((ran + 1))
    if ! (cd "$here" && FFB_REST_URL="http://127.0.0.1:$port" \
        FFB_PGJS_PREFIX="${prefix,,}" FFB_PGJS_TARGET="$t" \
        node --test --test-reporter=spec test.mjs); then
        fails=$((fails + 1))
        echo "--- ffb-rest log ($t):" >&2
        tail -n 40 "$log" >&2
    fi
    kill -TERM "$srv_pid"
    wait "$srv_pid"
    st=$?
    srv_pid=""
    if [ "$st" -ne 0 ]; then
        echo "run.sh: $t: ffb-rest exited with $st" >&2
        tail -n 40 "$log" >&2
        fails=$((fails + 1))
    fi
    drop "$t" >/dev/null || { echo "run.sh: $t: drop failed" >&2; fails=$((fails + 1)); }
    made=()
done
echo "run.sh: $ran target(s) run, $fails failure(s)"
[ "$fails" -eq 0 ]
