# Shared by bench/rest/run.sh and bench/rest/test_load.sh (sourced).
#
# rest_start NAME DATABASE FB_HOST FB_PORT POOL CONTEXT [PREFIX...]
#   writes $tmp/NAME.conf for the ffb-rest of the REST benchmarks
#   (Server-Timing on, tx=rollback allowed, aggregates on, k6's JWT secret,
#   the datasets' anonymous role), starts $REST on a free port (PREFIX, e.g.
#   `taskset -c 0`, in front), waits for "listening on", then sets $url and
#   appends the pid to the array `pids`. Uses $ISC_USER and $ISC_PASSWORD.
#   Exits 1 with ffb-rest's log when it does not start (5 ports tried).
rest_start() {
    local name=$1 db=$2 fhost=$3 fport=$4 pool=$5 ctx=$6 try p pid
    shift 6
    for try in 1 2 3 4 5; do
        p=$((20000 + (RANDOM % 20000)))
        cat >"$tmp/$name.conf" <<EOF
db-uri = "firebird://$ISC_USER:$ISC_PASSWORD@$fhost:$fport/$db"
db-anon-role = "WEB_ANON"
db-pool = $pool
server-host = "127.0.0.1"
server-port = $p
server-timing-enabled = true
db-tx-end = "commit-allow-override"
db-aggregates-enabled = true
db-request-context = "$ctx"
jwt-secret = "reallyreallyreallyreallyverysafe"
EOF
        "$@" "$REST" "$tmp/$name.conf" >"$tmp/$name.log" 2>&1 &
        pid=$!
        for _ in $(seq 1 300); do
            grep -q "listening on" "$tmp/$name.log" && break
            kill -0 $pid 2>/dev/null || break
            sleep 0.1
        done
        if grep -q "listening on" "$tmp/$name.log"; then
            pids+=("$pid")
            url=http://127.0.0.1:$p
            return 0
        fi
        kill $pid 2>/dev/null || true
        wait $pid 2>/dev/null || true
    done
    echo "ffb-rest ($name) did not start:" >&2
    cat "$tmp/$name.log" >&2
    exit 1
}

# rest_grant_roles DSN ROLE... : GRANT each role to $ISC_USER (ffb-rest runs
# as the loaders' user with the datasets' roles); a grant already there is
# no error.
rest_grant_roles() {
    local dsn=$1 r
    shift
    for r in "$@"; do
        "$LOAD" -exec "$dsn" "GRANT $r TO $ISC_USER" >/dev/null 2>&1 || true
    done
}
