#!/usr/bin/env bash
# Private Firebird 3.0 and 4.0 test servers on loopback, for the integration
# tests and CI.  See tests/servers/README.md.
#
#   fbservers.sh install             install FB3 (host) and FB4 (Debian 13 root)
#   fbservers.sh start <statedir>    start all instances, write <statedir>/servers.env
#   fbservers.sh stop <statedir>     stop every instance started in <statedir>
#   fbservers.sh status <statedir>   show which instances of <statedir> run
#   fbservers.sh probe <statedir>    1 when an instance does not answer a login
#
# Needs root (chroot, package installation, running servers as `firebird`).
set -euo pipefail

PROG=${0##*/}

# --- configuration ---------------------------------------------------------

TRIXIE_ROOT=${FFB_TRIXIE_ROOT:-/var/lib/ffb-test/trixie}
TRIXIE_ROOT=$(realpath -m "$TRIXIE_ROOT")
DEBIAN_MIRROR=${FFB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
START_TIMEOUT=${FFB_SERVER_START_TIMEOUT:-60}   # seconds, per instance
CACHE_PAGES=${FFB_SERVER_CACHE_PAGES:-256}      # DefaultDbCachePages

FB3_LIBDIR=/usr/lib/x86_64-linux-gnu/firebird/3.0   # fixed up in fb3_libdir()
FB3_SECDB=/var/lib/firebird/3.0/system/security3.fdb
FB4_SECDB=/var/lib/firebird/4.0/system/security4.fdb  # inside the root
FB4_INST_BASE=/var/lib/ffb-test                       # inside the root
# Debian 13's /usr/sbin/firebird, isql-fb, ... are a wrapper script that sets
# FIREBIRD to the package's root, so the instances run the real binaries.
FB4_BINDIR=/usr/lib/firebird/4.0/bin                  # inside the root

SYSDBA_PASSWORD=masterkey
SRP_USER=FFBTEST
SRP_PASSWORD=ffbpass
LEGACY_USER=FFBLEGACY
LEGACY_PASSWORD=legacypw
DB_NAME=ffbtest.fdb

# name version port AuthServer UserManager WireCrypt WireCompression
# (UserManager "-" = server default, i.e. Srp only)
INSTANCES=(
    "fb3  3 3051 Srp,Srp256,Legacy_Auth    Srp,Legacy_UserManager Required false"
    "fb3e 3 3052 Srp256,Srp,Srp224,Srp384,Srp512,Legacy_Auth Srp,Legacy_UserManager Enabled true"
    "fb3d 3 3053 Srp,Legacy_Auth           -                      Disabled false"
    "fb4  4 3061 Srp256,Srp,Legacy_Auth    Srp,Legacy_UserManager Required false"
    "fb4e 4 3062 Srp256,Srp,Srp224,Srp384,Srp512,Legacy_Auth - Enabled true"
    "fb4d 4 3063 Srp256,Legacy_Auth        -                      Disabled false"
    "fb4k 4 3064 Srp256                    -                      Disabled false"
)
# FFB_SERVER_INSTANCES replaces the list (entries separated by ';', fields as
# above) and FFB_SERVER_EXTRA_CONF (lines) is appended to each firebird.conf:
# bench/growth/run.sh starts its private instance this way.
if [ -n "${FFB_SERVER_INSTANCES:-}" ]; then
    IFS=';' read -r -a INSTANCES <<<"$FFB_SERVER_INSTANCES"
fi
# fb4k also loads Firebird 4.0's sample database-crypt key holder
# (plugins/libfbSampleKeyHolder.so, Auto = false): a database encrypted with
# the sample plugin makes the server ask the client for the key
# (op_crypt_key_callback), which tests/integration/test_dbcrypt.c answers.
KEYHOLDER_INSTANCE=fb4k

# --- helpers ---------------------------------------------------------------

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

loud() {
    {
        echo
        echo "######################################################################"
        printf '## %s:\n' "$PROG"
        printf '##   %s\n' "$@"
        echo "######################################################################"
    } >&2
}

usage() {
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (chroot, apt-get, servers run as user firebird)"
}

# Split an INSTANCES entry into I_* variables.
parse_instance() {
    # shellcheck disable=SC2086
    set -- $1
    I_NAME=$1 I_VER=$2 I_PORT=$3 I_AUTH=$4 I_UM=$5 I_CRYPT=$6 I_COMP=$7
    I_KEY=$(printf '%s' "$I_NAME" | tr '[:lower:]' '[:upper:]')
    case ",$I_AUTH," in *,Legacy_Auth,*) I_HAS_LEGACY=1 ;; *) I_HAS_LEGACY=0 ;; esac
}

# Directories of an instance.  I_DIR is the host path of its root; I_SDIR the
# same directory as the server sees it (differs for FB4, which is chrooted).
instance_dirs() {
    if [ "$I_VER" = 3 ]; then
        I_SDIR=$STATEDIR/$I_NAME
        I_DIR=$I_SDIR
    else
        I_SDIR=$FB4_INST_BASE/$I_NAME
        I_DIR=$TRIXIE_ROOT$I_SDIR
    fi
    I_DBDIR_S=$I_SDIR/db          # as the server sees it
    I_DBDIR=$I_DIR/db             # on the host
    I_DB_S=$I_DBDIR_S/$DB_NAME
    I_PIDFILE=$STATEDIR/$I_NAME.pid
    I_OUT=$STATEDIR/$I_NAME.out   # the server's stdout/stderr
    I_MARK="FFB_TEST_INSTANCE=$STATEDIR:$I_NAME"
}

fb3_libdir() {
    local e
    e=$(dpkg -L firebird3.0-server-core 2>/dev/null | grep '/plugins/libEngine12.so$' | head -n1 || true)
    if [ -n "$e" ]; then FB3_LIBDIR=${e%/plugins/libEngine12.so}; fi
    if [ ! -x /usr/sbin/firebird ] || [ ! -d "$FB3_LIBDIR/plugins" ] || [ ! -r "$FB3_SECDB" ]; then
        die "Firebird 3.0 is not installed; run: $0 install"
    fi
}

fb4_libdir() {
    local d
    d=$(chroot "$TRIXIE_ROOT" sh -c 'dpkg -L firebird4.0-server-core 2>/dev/null | grep "/plugins/libEngine13.so$" | head -n1' || true)
    [ -n "$d" ] || die "Firebird 4.0 is not installed in $TRIXIE_ROOT; run: $0 install"
    FB4_LIBDIR=${d%/plugins/libEngine13.so}
    [ -x "$TRIXIE_ROOT$FB4_BINDIR/firebird" ] || die "no $FB4_BINDIR/firebird in $TRIXIE_ROOT"
}

# uid:gid of user firebird on the host or in the root.
fb_ids() {
    local passwd=$1/etc/passwd line
    line=$(grep '^firebird:' "$passwd") || die "no user firebird in $passwd"
    printf '%s:%s\n' "$(echo "$line" | cut -d: -f3)" "$(echo "$line" | cut -d: -f4)"
}

proc_mounted() { grep -qs " $TRIXIE_ROOT/proc " /proc/mounts; }

mount_proc() {
    proc_mounted || mount -t proc proc "$TRIXIE_ROOT/proc"
}

# Unmount the root's /proc unless some process still lives in the root.
umount_proc_if_idle() {
    proc_mounted || return 0
    local p
    for p in /proc/[0-9]*; do
        if [ "$(readlink "$p/root" 2>/dev/null || true)" = "$TRIXIE_ROOT" ]; then
            return 0
        fi
    done
    umount "$TRIXIE_ROOT/proc" 2>/dev/null || umount -l "$TRIXIE_ROOT/proc" || true
}

in_root() { chroot "$TRIXIE_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# --- install ---------------------------------------------------------------

pkg_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

apt_install_host() {
    local missing=() p
    for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing on the host: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || log "warning: apt-get update reported errors; trying to install anyway"
    apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
}

cmd_install() {
    need_root
    local t0=$SECONDS
    mkdir -p "$(dirname "$TRIXIE_ROOT")"
    exec 9>"$(dirname "$TRIXIE_ROOT")/.ffb-install.lock"
    flock 9

    apt_install_host firebird3.0-server firebird3.0-utils debootstrap
    # The Debian package may start its own system server (port 3050) where an
    # init system exists; the test instances do not depend on it or on its
    # state and use their own ports, lock and run directories.

    local mark=$TRIXIE_ROOT/.ffb-debootstrap-done
    if [ ! -e "$mark" ]; then
        if [ -e "$TRIXIE_ROOT" ]; then
            log "removing incomplete root $TRIXIE_ROOT"
            grep -s " $TRIXIE_ROOT/" /proc/mounts | awk '{print $2}' | sort -r |
                while read -r m; do umount "$m" || umount -l "$m"; done
            rm -rf --one-file-system "$TRIXIE_ROOT"
        fi
        log "debootstrap --variant=minbase trixie $TRIXIE_ROOT $DEBIAN_MIRROR"
        local t1=$SECONDS
        debootstrap --variant=minbase trixie "$TRIXIE_ROOT" "$DEBIAN_MIRROR" \
            > "$(dirname "$TRIXIE_ROOT")/debootstrap.log" 2>&1 || {
            tail -n 30 "$(dirname "$TRIXIE_ROOT")/debootstrap.log" >&2
            die "debootstrap failed (full log: $(dirname "$TRIXIE_ROOT")/debootstrap.log)"
        }
        log "debootstrap took $((SECONDS - t1)) s"
        touch "$mark"
    fi

    # Never start services inside the root.
    printf '#!/bin/sh\nexit 101\n' > "$TRIXIE_ROOT/usr/sbin/policy-rc.d"
    chmod 755 "$TRIXIE_ROOT/usr/sbin/policy-rc.d"
    [ -s "$TRIXIE_ROOT/etc/resolv.conf" ] || cp -L /etc/resolv.conf "$TRIXIE_ROOT/etc/resolv.conf" 2>/dev/null || true

    mount_proc   # the post-install script reads /proc/sys/kernel/random/uuid
    if [ "$(in_root dpkg-query -W -f='${Status}\n' firebird4.0-server firebird4.0-utils 2>/dev/null |
            grep -c '^install ok installed$' || true)" = 2 ]; then
        log "firebird4.0 already installed in $TRIXIE_ROOT"
    else
        log "installing firebird4.0-server firebird4.0-utils in $TRIXIE_ROOT"
        local t2=$SECONDS
        in_root apt-get update -qq
        in_root apt-get install -y -q --no-install-recommends \
            -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
            firebird4.0-server firebird4.0-utils
        in_root apt-get clean
        log "chroot package install took $((SECONDS - t2)) s"
    fi
    umount_proc_if_idle
    log "install done ($((SECONDS - t0)) s)"
}

# --- instance setup --------------------------------------------------------

# firebird.conf of an instance.  $1 = UserManager list (or "-").
write_conf() {
    local um=$1 f=$I_DIR/firebird.conf
    {
        echo "# generated by $PROG for test instance $I_NAME"
        echo "RemoteServicePort = $I_PORT"
        echo "RemoteBindAddress = 127.0.0.1"
        echo "ServerMode = Super"
        echo "AuthServer = ${I_AUTH//,/, }"
        [ "$um" = - ] || echo "UserManager = ${um//,/, }"
        echo "WireCrypt = $I_CRYPT"
        echo "WireCompression = $I_COMP"
        echo "SecurityDatabase = $I_SDIR/security.fdb"
        echo "DatabaseAccess = Full"
        echo "DefaultDbCachePages = $CACHE_PAGES"
        echo "TempCacheLimit = 16M"
        [ "$I_NAME" != "$KEYHOLDER_INSTANCE" ] || echo "KeyHolderPlugin = fbSampleKeyHolder"
        [ -z "${FFB_SERVER_EXTRA_CONF:-}" ] || printf '%s\n' "$FFB_SERVER_EXTRA_CONF"
    } > "$f"
}

# Embedded isql on the instance's own configuration (before the server runs).
embedded_isql() {
    local sql=$1
    if [ "$I_VER" = 3 ]; then
        (cd "$I_DIR" && env -u ISC_USER -u ISC_PASSWORD FIREBIRD="$I_DIR" \
            FIREBIRD_LOCK="$I_DIR/run" FIREBIRD_TMP="$I_DIR/run" \
            isql-fb -b -q -m <<<"$sql")
    else
        in_root FIREBIRD="$I_SDIR" FIREBIRD_LOCK="$I_SDIR/run" FIREBIRD_TMP="$I_SDIR/run" \
            /bin/sh -c 'cd "$FIREBIRD" && exec "$0" -b -q -m' "$FB4_BINDIR/isql-fb" <<<"$sql"
    fi
}

# copy_intl SRC ROOT DEST: files of SRC into the new directory DEST, hard-linked
# where possible; symlinks are resolved, absolute ones inside ROOT.
copy_intl() {
    local src=$1 root=$2 dest=$3 x name t
    mkdir -p "$dest"
    for x in "$src"/*; do
        [ -e "$x" ] || [ -L "$x" ] || continue
        name=${x##*/}
        if [ -L "$x" ]; then
            t=$(readlink "$x")
            case "$t" in
            /*) t=$root$t ;;
            *) t=${x%/*}/$t ;;
            esac
            cp "$t" "$dest/$name"
        else
            ln "$x" "$dest/$name" 2>/dev/null || cp "$x" "$dest/$name"
        fi
    done
}

setup_instance() {
    local libdir secdb ids f
    rm -rf --one-file-system "$I_DIR"
    mkdir -p "$I_DIR/run" "$I_DIR/db"
    if [ "$I_VER" = 3 ]; then
        libdir=$FB3_LIBDIR secdb=$FB3_SECDB ids=$FB3_IDS
        cp "$secdb" "$I_DIR/security.fdb"
    else
        libdir=$FB4_LIBDIR secdb=$FB4_SECDB ids=$FB4_IDS
        cp "$TRIXIE_ROOT$secdb" "$I_DIR/security.fdb"
        rm -rf "${STATEDIR:?}/$I_NAME"
        ln -s "$I_DIR" "$STATEDIR/$I_NAME"
    fi
    # intl: a real directory with the module and its configuration. Loaded
    # through a symlinked directory (3.0) or from a nested copy (4.0) the
    # character sets never register ("character set ... is not installed").
    if [ "$I_VER" = 3 ]; then
        copy_intl "$libdir/intl" "" "$I_DIR/intl"
    else
        copy_intl "$TRIXIE_ROOT$libdir/intl" "$TRIXIE_ROOT" "$I_DIR/intl"
    fi
    for f in plugins lib UDF firebird.msg plugins.conf; do
        if [ "$I_VER" = 3 ]; then
            if [ -e "$libdir/$f" ]; then ln -s "$libdir/$f" "$I_DIR/$f"; fi
        elif [ -d "$TRIXIE_ROOT$libdir/$f" ]; then
            # 4.0 refuses a plugin whose real path differs from the one it
            # asked for ("Actual module name does not match requested"), so
            # the directories are hard-linked copies, not symlinks.
            cp -rl "$TRIXIE_ROOT$libdir/$f" "$I_DIR/$f" 2>/dev/null ||
                cp -r "$TRIXIE_ROOT$libdir/$f" "$I_DIR/$f"
        elif [ -e "$TRIXIE_ROOT$libdir/$f" ] || [ -L "$TRIXIE_ROOT$libdir/$f" ]; then
            ln -s "$libdir/$f" "$I_DIR/$f"
        fi
    done
    echo "security.db = $I_SDIR/security.fdb" > "$I_DIR/databases.conf"

    # Users: set in embedded mode on the copy of the security database.  The
    # legacy user needs Legacy_UserManager at creation time only; Legacy_Auth
    # reads the same table whatever UserManager the server runs with.
    local sql="connect '$I_SDIR/security.fdb' user SYSDBA;
create or alter user SYSDBA password '$SYSDBA_PASSWORD' using plugin Srp;
create or alter user $SRP_USER password '$SRP_PASSWORD' using plugin Srp;
commit;
grant create database to user $SRP_USER;
commit;"
    if [ "$I_HAS_LEGACY" = 1 ]; then
        write_conf Srp,Legacy_UserManager
        sql+="
create or alter user SYSDBA password '$SYSDBA_PASSWORD' using plugin Legacy_UserManager;
create or alter user $LEGACY_USER password '$LEGACY_PASSWORD' using plugin Legacy_UserManager;
commit;"
    else
        write_conf "$I_UM"
    fi
    embedded_isql "$sql" > "$I_DIR/setup.log" 2>&1 || {
        cat "$I_DIR/setup.log" >&2
        return 1
    }
    write_conf "$I_UM"
    rm -rf "${I_DIR:?}/run"/*
    chown -R "$ids" "$I_DIR"
    chmod 0775 "$I_DIR/db"
}

launch_instance() {
    : > "$I_OUT"
    if [ "$I_VER" = 3 ]; then
        # shellcheck disable=SC2086
        (cd / && exec setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
            "$I_MARK" FIREBIRD="$I_DIR" FIREBIRD_LOCK="$I_DIR/run" FIREBIRD_TMP="$I_DIR/run" \
            setpriv --reuid="${FB3_IDS%:*}" --regid="${FB3_IDS#*:}" --clear-groups \
            /usr/sbin/firebird </dev/null >>"$I_OUT" 2>&1) &
    else
        (cd / && exec setsid chroot --userspec="$FB4_IDS" --groups= "$TRIXIE_ROOT" \
            /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
            "$I_MARK" FIREBIRD="$I_SDIR" FIREBIRD_LOCK="$I_SDIR/run" FIREBIRD_TMP="$I_SDIR/run" \
            "$FB4_BINDIR/firebird" </dev/null >>"$I_OUT" 2>&1) &
    fi
    echo $! > "$I_PIDFILE"
    disown $!   # no "Killed" job notices; the server outlives this script
}

# Processes of an instance: every process carrying its marker variable (the
# pid file is informational; this also finds servers whose pid file is lost).
instance_pids() {
    local f
    { grep -lzxF "$I_MARK" /proc/[0-9]*/environ 2>/dev/null || true; } |
        while read -r f; do f=${f#/proc/}; echo "${f%/environ}"; done | sort -un
}

port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# isql over TCP with the host's Firebird 3.0 client.
client_isql() {
    local user=$1 pass=$2 sql=$3
    (cd / && env -u FIREBIRD -u ISC_USER -u ISC_PASSWORD -u FIREBIRD_LOCK -u FIREBIRD_TMP \
        timeout 30 isql-fb -b -q -m -user "$user" -password "$pass" <<<"$sql")
}

dsn() { printf '127.0.0.1/%s:%s' "$I_PORT" "$1"; }

log_tail() {
    echo "---- $I_OUT (server stdout/stderr) ----"
    tail -n 20 "$I_OUT" 2>/dev/null || true
    local flog
    if [ "$I_VER" = 3 ]; then flog=/var/log/firebird/firebird3.0.log
    else flog=$I_DIR/firebird4.0.log; fi
    echo "---- $flog$([ "$I_VER" = 3 ] && echo " (shared by all Firebird 3.0 servers)") ----"
    tail -n 30 "$flog" 2>/dev/null || true
    [ ! -s "$I_DIR/check.log" ] || { echo "---- last isql output ----"; tail -n 20 "$I_DIR/check.log"; }
}

# Wait until the instance accepts TCP and logins; create its database.
wait_instance() {
    local deadline=$((SECONDS + START_TIMEOUT))
    local probe='select 1 from rdb$database;'
    local db
    db=$(dsn "$I_DB_S")
    while :; do
        if [ -z "$(instance_pids)" ]; then
            WAIT_ERR="the server process exited"
            return 1
        fi
        if port_open "$I_PORT"; then
            if [ -e "$I_DBDIR/$DB_NAME" ]; then
                client_isql SYSDBA "$SYSDBA_PASSWORD" "connect '$db'; $probe"
            else
                client_isql SYSDBA "$SYSDBA_PASSWORD" \
                    "create database '$db' page_size 8192 default character set UTF8; $probe"
            fi > "$I_DIR/check.log" 2>&1 && break
        fi
        if [ $SECONDS -ge $deadline ]; then
            WAIT_ERR="no working TCP listener with SYSDBA login on 127.0.0.1:$I_PORT within $START_TIMEOUT s"
            return 1
        fi
        sleep 0.2
    done
    # Every user must be able to log in (the legacy one only where the
    # instance lets an unencrypted login in: Legacy_Auth has no session key).
    local u
    for u in "SYSDBA $SYSDBA_PASSWORD" "$SRP_USER $SRP_PASSWORD" \
             ${I_LEGACY_OK:+"$LEGACY_USER $LEGACY_PASSWORD"}; do
        # shellcheck disable=SC2086
        set -- $u
        if ! client_isql "$1" "$2" "connect '$db'; $probe" > "$I_DIR/check.log" 2>&1; then
            WAIT_ERR="login as $1 over TCP failed"
            return 1
        fi
    done
    # Test users may create objects in the shared database; no fsync per page.
    client_isql SYSDBA "$SYSDBA_PASSWORD" "connect '$db';
grant create table to user $SRP_USER; commit;" > "$I_DIR/check.log" 2>&1 || true
    (cd / && env -u FIREBIRD timeout 30 gfix -write async -user SYSDBA -password "$SYSDBA_PASSWORD" "$db") \
        >> "$I_DIR/check.log" 2>&1 || log "warning: $I_NAME: gfix -write async failed (ignored)"
    return 0
}

# --- start / stop ------------------------------------------------------------

set_statedir() {
    [ $# -ge 1 ] && [ -n "$1" ] || usage
    mkdir -p "$1"
    STATEDIR=$(cd "$1" && pwd -P)
    case $STATEDIR in
        *[[:space:]\'\"]*) die "the state directory path must not contain blanks or quotes: $STATEDIR" ;;
    esac
}

cmd_start() {
    need_root
    set_statedir "$@"
    fb3_libdir
    [ -e "$TRIXIE_ROOT/.ffb-debootstrap-done" ] || die "no Debian 13 root at $TRIXIE_ROOT; run: $0 install"
    FB3_IDS=$(fb_ids "")
    FB4_IDS=$(fb_ids "$TRIXIE_ROOT")

    # The server (user firebird) must reach the statedir.
    if ! setpriv --reuid="${FB3_IDS%:*}" --regid="${FB3_IDS#*:}" --clear-groups test -x "$STATEDIR"; then
        die "user firebird cannot reach $STATEDIR (a parent directory is not searchable); use another <statedir>"
    fi

    cmd_stop_quiet
    rm -f "$STATEDIR/servers.env"
    mount_proc
    fb4_libdir

    local e busy=""
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"
        if port_open "$I_PORT"; then busy+=" $I_NAME:$I_PORT"; fi
    done
    if [ -n "$busy" ]; then
        loud "cannot start: port(s) already in use:$busy" \
             "another test server set may still run; stop it with: $0 stop <its statedir>"
        ss -ltnp 2>/dev/null | grep -E ':(305[1-3]|306[1-4])\b' >&2 || true
        umount_proc_if_idle
        exit 1
    fi

    local t0=$SECONDS
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        if ! setup_instance; then
            loud "instance $I_NAME: setting up users in its security database failed"
            cmd_stop_quiet; exit 1
        fi
        launch_instance
    done

    local failed=""
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        I_LEGACY_OK=""
        [ "$I_HAS_LEGACY" = 1 ] && [ "$I_CRYPT" != Required ] && I_LEGACY_OK=1
        WAIT_ERR=""
        if ! wait_instance; then
            loud "Firebird test instance '$I_NAME' (Firebird $I_VER, port $I_PORT) FAILED TO START: $WAIT_ERR"
            log_tail >&2
            failed+=" $I_NAME"
            break
        fi
        log "$I_NAME ready (Firebird $I_VER, 127.0.0.1:$I_PORT, WireCrypt=$I_CRYPT)"
    done
    if [ -n "$failed" ]; then
        log "stopping the instances started in $STATEDIR"
        cmd_stop_quiet
        exit 1
    fi

    write_env
    log "all instances ready in $((SECONDS - t0)) s; environment: $STATEDIR/servers.env"
}

write_env() {
    local tmp=$STATEDIR/servers.env.tmp e names=""
    for e in "${INSTANCES[@]}"; do parse_instance "$e"; names+="${names:+ }$I_NAME"; done
    {
        echo "# generated by tests/servers/$PROG start; source with: set -a; . ./servers.env; set +a"
        echo "FFB_TEST_SERVERS=\"$names\""
        echo "FFB_TEST_STATEDIR=$STATEDIR"
        for e in "${INSTANCES[@]}"; do
            parse_instance "$e"; instance_dirs
            local p=FFB_TEST_${I_KEY}
            local legacy="" refused=""
            if [ "$I_HAS_LEGACY" = 1 ]; then
                if [ "$I_CRYPT" = Required ]; then refused=$LEGACY_USER; else legacy=$LEGACY_USER; fi
            fi
            echo
            echo "${p}_HOST=127.0.0.1"
            echo "${p}_PORT=$I_PORT"
            echo "${p}_VERSION=$I_VER"
            echo "${p}_AUTH=$I_AUTH"
            echo "${p}_WIRECRYPT=$I_CRYPT"
            echo "${p}_COMPRESSION=$I_COMP"
            echo "${p}_DBDIR=$I_DBDIR_S"
            echo "${p}_DB=$I_DB_S"
            echo "${p}_DSN=127.0.0.1/$I_PORT:$I_DB_S"
            echo "${p}_USER=SYSDBA"
            echo "${p}_PASSWORD=$SYSDBA_PASSWORD"
            echo "${p}_SRP_USER=$SRP_USER"
            echo "${p}_SRP_PASSWORD=$SRP_PASSWORD"
            echo "${p}_LEGACY_USER=$legacy"
            echo "${p}_LEGACY_PASSWORD=$LEGACY_PASSWORD"
            echo "${p}_LEGACY_USER_REFUSED=$refused"
            if [ "$I_NAME" = "$KEYHOLDER_INSTANCE" ]; then echo "${p}_KEYHOLDER=1"; else echo "${p}_KEYHOLDER=0"; fi
        done
    } > "$tmp"
    mv -f "$tmp" "$STATEDIR/servers.env"
}

# Stop what runs from $STATEDIR; prints nothing when nothing runs.
cmd_stop_quiet() {
    local e pids all=() deadline p
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        read -r -d '' -a pids < <(instance_pids) || true
        if [ ${#pids[@]} -gt 0 ]; then
            log "stopping $I_NAME (pid ${pids[*]})"
            kill -TERM "${pids[@]}" 2>/dev/null || true
            all+=("${pids[@]}")
        fi
    done
    if [ ${#all[@]} -gt 0 ]; then
        deadline=$((SECONDS + 15))
        while [ $SECONDS -lt $deadline ]; do
            local alive=0
            for p in "${all[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
            [ $alive = 0 ] && break
            sleep 0.2
        done
        for p in "${all[@]}"; do
            if kill -0 "$p" 2>/dev/null; then
                log "pid $p ($(cat "/proc/$p/comm" 2>/dev/null || true), waiting in $(cat "/proc/$p/wchan" 2>/dev/null || true)) did not stop on SIGTERM; sending SIGKILL"
                kill -KILL "$p" 2>/dev/null || true
                sleep 0.5
            fi
        done
    fi
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        rm -f "$I_PIDFILE"
    done
    umount_proc_if_idle
}

cmd_stop() {
    need_root
    [ $# -ge 1 ] && [ -n "$1" ] || usage
    [ -d "$1" ] || { log "no state directory $1; nothing to stop"; return 0; }
    STATEDIR=$(cd "$1" && pwd -P)
    cmd_stop_quiet
    rm -f "$STATEDIR/servers.env"
}

# Every instance of <statedir> answers a login and a query within 20 s?
# Prints the ones that do not (with their threads' stacks when gdb is in
# the Debian 13 root) and returns 1. Firebird 4.0.5 can wedge - accept TCP,
# answer nothing - and 4.0.5 and 3.0.11 can abort after a connection is cut
# mid-request (docs/testing.md, "A Firebird wedge").
cmd_probe() {
    [ $# -ge 1 ] && [ -n "$1" ] && [ -d "$1" ] || usage
    STATEDIR=$(cd "$1" && pwd -P)
    local e rc=0 pid
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        if ! (cd / && env -u FIREBIRD -u ISC_USER -u ISC_PASSWORD -u FIREBIRD_LOCK \
                -u FIREBIRD_TMP timeout 20 isql-fb -b -q -m -user SYSDBA \
                -password "$SYSDBA_PASSWORD" <<<"connect '$(dsn "$I_DB_S")'; select 1 from rdb\$database;") \
                >/dev/null 2>&1; then
            loud "instance $I_NAME (Firebird $I_VER, port $I_PORT) does not answer a login within 20 s"
            rc=1
            for pid in $(instance_pids); do
                if [ "$I_VER" = 4 ] && [ -x "$TRIXIE_ROOT/usr/bin/gdb" ]; then
                    timeout 60 chroot "$TRIXIE_ROOT" gdb -p "$pid" -batch -ex 'thread apply all bt 8' 2>/dev/null |
                        grep -E '^(Thread|#)' | head -n 80 >&2 || true
                fi
            done
        fi
    done
    return $rc
}

cmd_status() {
    [ $# -ge 1 ] && [ -n "$1" ] && [ -d "$1" ] || usage
    STATEDIR=$(cd "$1" && pwd -P)
    local e rc=0 pids
    for e in "${INSTANCES[@]}"; do
        parse_instance "$e"; instance_dirs
        pids=$(instance_pids)
        if [ -n "$pids" ] && port_open "$I_PORT"; then
            echo "$I_NAME running (pid ${pids//$'\n'/ }, port $I_PORT)"
        else
            echo "$I_NAME stopped"; rc=1
        fi
    done
    return $rc
}

case ${1:-} in
    install) shift; cmd_install "$@" ;;
    start) shift; cmd_start "$@" ;;
    stop) shift; cmd_stop "$@" ;;
    status) shift; cmd_status "$@" ;;
    probe) shift; cmd_probe "$@" ;;
    *) usage ;;
esac
