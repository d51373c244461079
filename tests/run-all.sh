#!/usr/bin/env bash
# The project's test command: installs and starts the Firebird 3.0 and 4.0
# test servers (tests/servers/), builds with meson and runs every test suite
# against them; the servers are stopped on exit.  Needs root, or sudo, for the
# servers.  First version; the main developer extends it.
#
#   FFB_BUILD_DIR   build directory            (default: build)
#   FFB_SERVER_STATE  server state directory   (default: build-servers-state)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${FFB_BUILD_DIR:-build}
STATE=${FFB_SERVER_STATE:-build-servers-state}

SUDO=()
# shellcheck disable=SC2054  # the commas belong to one sudo option
[ "$(id -u)" -eq 0 ] || SUDO=(sudo --preserve-env=FFB_TRIXIE_ROOT,FFB_DEBIAN_MIRROR,FFB_SERVER_START_TIMEOUT)
FBS=("${SUDO[@]}" bash tests/servers/fbservers.sh)

"${FBS[@]}" install

trap '"${FBS[@]}" stop "$STATE" || true' EXIT
trap 'exit 130' INT TERM
"${FBS[@]}" start "$STATE"

# A failure here is the servers' fault, not the library's.
"${SUDO[@]}" bash tests/servers/selftest.sh "$STATE"

set -a
# shellcheck disable=SC1091
. "$STATE/servers.env"
set +a
export FFB_TEST_REQUIRE_SERVER=1

if [ ! -e "$BUILD/build.ninja" ]; then
    meson setup "$BUILD"
fi
rc=0
meson test -C "$BUILD" --print-errorlogs || rc=$?
exit $rc
