#!/usr/bin/env bash
# Check the instances started by fbservers.sh with the stock isql clients:
#
#   tests/servers/selftest.sh <statedir>
#
# For every instance and user: login over TCP with the host's Firebird 3.0
# isql (default client settings, then with WireCompression = true) and, for
# every instance, with the Debian 13 root's Firebird 4.0 isql; checks the
# auth plugin, wire encryption and compression the server reports, that the
# legacy user is refused where WireCrypt = Required, and that SYSDBA and the
# Srp user can CREATE and DROP a database in <DBDIR> over TCP.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 <statedir>" >&2; exit 2; }
STATEDIR=$(cd "$1" && pwd -P)
[ -s "$STATEDIR/servers.env" ] || { echo "$0: no $STATEDIR/servers.env (servers not started?)" >&2; exit 1; }
set -a
# shellcheck disable=SC1091
. "$STATEDIR/servers.env"
set +a

TRIXIE_ROOT=${FFB_TRIXIE_ROOT:-/var/lib/ffb-test/trixie}
TRIXIE_ROOT=${TRIXIE_ROOT%/}
FB4_ISQL=/usr/lib/firebird/4.0/bin/isql-fb   # the real binary, not Debian's wrapper
FB3_LIBDIR=/usr/lib/x86_64-linux-gnu/firebird/3.0

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A client root for the host's 3.0 library that asks for compression.
mkdir "$TMP/zclient"
for f in plugins intl lib firebird.msg plugins.conf; do ln -s "$FB3_LIBDIR/$f" "$TMP/zclient/$f"; done
printf 'WireCompression = true\nAuthClient = Srp256, Srp, Legacy_Auth\n' > "$TMP/zclient/firebird.conf"

FAILS=0
PASSES=0
ok()   { PASSES=$((PASSES + 1)); printf '  ok    %s\n' "$*"; }
fail() { FAILS=$((FAILS + 1)); printf '  FAIL  %s\n' "$*"; }

# isql <client> <user> <password> <sql> ; client = fb3 | fb3z | fb4
run_isql() {
    local client=$1 user=$2 pass=$3 sql=$4
    case $client in
        fb3)  (cd / && env -u FIREBIRD timeout 30 isql-fb -q -m -b -user "$user" -password "$pass" <<<"$sql") ;;
        fb3z) (cd / && FIREBIRD=$TMP/zclient timeout 30 isql-fb -q -m -b -user "$user" -password "$pass" <<<"$sql") ;;
        fb4)  timeout 30 chroot "$TRIXIE_ROOT" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
                  "$FB4_ISQL" -q -m -b -user "$user" -password "$pass" <<<"$sql" ;;
    esac
}

INFO_SQL="set list on;
select current_user as usr, a.mon\$auth_method as auth,
       rdb\$get_context('SYSTEM','WIRE_ENCRYPTED') as enc,
       rdb\$get_context('SYSTEM','WIRE_COMPRESSED') as comp,
       rdb\$get_context('SYSTEM','ENGINE_VERSION') as ver
  from mon\$attachments a where a.mon\$attachment_id = current_connection;"

field() { awk -v k="$1" '$1 == k { print $2; exit }'; }

for n in $FFB_TEST_SERVERS; do
    N=$(printf '%s' "$n" | tr '[:lower:]' '[:upper:]')
    v() { eval "printf '%s' \"\${FFB_TEST_${N}_$1-}\""; }
    port=$(v PORT) ver=$(v VERSION) crypt=$(v WIRECRYPT) comp=$(v COMPRESSION)
    dsn=127.0.0.1/$port:$(v DB)
    echo "== $n (Firebird $ver, port $port, WireCrypt=$crypt, compression=$comp, auth=$(v AUTH))"

    users=("$(v USER) $(v PASSWORD)" "$(v SRP_USER) $(v SRP_PASSWORD)")
    [ -z "$(v LEGACY_USER)" ] || users+=("$(v LEGACY_USER) $(v LEGACY_PASSWORD)")

    for client in fb3 fb3z fb4; do
        for u in "${users[@]}"; do
            # shellcheck disable=SC2086
            set -- $u
            if out=$(run_isql "$client" "$1" "$2" "connect '$dsn'; $INFO_SQL" 2>&1); then
                auth=$(field AUTH <<<"$out") enc=$(field ENC <<<"$out")
                zc=$(field COMP <<<"$out") sver=$(field VER <<<"$out")
                want_enc=TRUE
                [ "$crypt" = Disabled ] && want_enc=FALSE
                [ "$auth" = Legacy_Auth ] && want_enc=FALSE
                # WireCompression is a client-only setting: the server follows
                # the client whatever its own firebird.conf says.
                want_comp=FALSE
                [ "$client" = fb3z ] && want_comp=TRUE
                desc="$client client, $1: auth=$auth encrypted=$enc compressed=$zc server=$sver"
                if [ "$enc" = "$want_enc" ] && [ "$zc" = "$want_comp" ] && [ "${sver%%.*}" = "$ver" ]; then
                    ok "$desc"
                else
                    fail "$desc (expected encrypted=$want_enc compressed=$want_comp)"
                fi
            else
                fail "$client client, $1: login failed: $(tr '\n' ' ' <<<"$out")"
            fi
        done
    done

    if [ -n "$(v LEGACY_USER_REFUSED)" ]; then
        if out=$(run_isql fb3 "$(v LEGACY_USER_REFUSED)" "$(v LEGACY_PASSWORD)" "connect '$dsn'; $INFO_SQL" 2>&1); then
            fail "legacy user $(v LEGACY_USER_REFUSED) logged in although WireCrypt=Required"
        else
            ok "legacy user refused: $(grep -v '^Statement failed' <<<"$out" | head -n1)"
        fi
    fi

    for u in "$(v USER) $(v PASSWORD)" "$(v SRP_USER) $(v SRP_PASSWORD)"; do
        # shellcheck disable=SC2086
        set -- $u
        db="127.0.0.1/$port:$(v DBDIR)/selftest_${1}_$$.fdb"
        if out=$(run_isql fb3 "$1" "$2" "create database '$db' page_size 8192 default character set UTF8;
select 1 from rdb\$database; drop database;" 2>&1); then
            ok "$1 can create and drop a database in $(v DBDIR)"
        else
            fail "$1 cannot create a database in $(v DBDIR): $(tr '\n' ' ' <<<"$out")"
        fi
    done
done

echo
echo "selftest: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
