#!/bin/sh
# The I/O boundary (STYLE.md sections 1 and 8), checked with grep:
#
#  1. Only the I/O drivers, lib/net.c and lib/uv.c (with its pool,
#     lib/uv_pool.c), include socket, DNS, poll or libuv headers, or call
#     socket functions. The libuv adapter's
#     public header (include/fastfb_uv.h) may include <uv.h> and nothing
#     else from the list.
#  2. proto/ includes no OpenSSL, zlib, libuv or socket headers, and does
#     not allocate with the C library directly: it allocates only through
#     the ffbp_writer's allocator. proto/xdr.c implements that writer, and
#     is the one place that falls back to realloc()/free() when a writer has
#     no allocator.
#  3. The engine is sans-I/O: only the blocking loop (lib/run.c) calls a
#     transport (conn->tp, the socket driver's table), and the blocking
#     loop itself (ffb__run, ffb__wait, ffb__run_step, ffb__write_out,
#     ffb__io_connect, ffb__io_close) is called only by the public blocking
#     calls, all in lib/blocking.c - never by the engine (lib/engine.c),
#     the connection and SQL objects (conn.c, stmt.c, tx.c, blob.c,
#     batch.c, cache.c, pipeline.c, simple.c), the handshake, the
#     transforms, the value codecs or proto/.
#  4. The engine (lib/engine.c) and the transports never call the SQL
#     objects above them (lib/stmt.c, tx.c, blob.c, batch.c, cache.c,
#     pipeline.c, values.c) by name: results and inline blobs reach those
#     through hooks the connection installs, held requests through their
#     own send functions.
#
# Usage: check_io_boundary.sh SOURCE_ROOT
# Comments are ignored; string literals are ignored for the call checks.

root=${1:-.}
cd "$root" || exit 2

status=0
fail() {
    status=1
    printf '%s\n' "$1"
}

# Print FILE with comments blanked (line numbers kept). With "nostrings",
# the contents of string and character literals are blanked too.
strip() {
    awk -v nostrings="$2" '
    BEGIN { incomment = 0 }
    {
        line = $0; out = ""; i = 1; n = length(line); q = ""
        while (i <= n) {
            c = substr(line, i, 1); c2 = substr(line, i, 2)
            if (incomment) {
                if (c2 == "*/") { incomment = 0; i += 2; out = out "  " }
                else { i++; out = out " " }
            } else if (q != "") {
                if (c == "\\") { out = out (nostrings ? "  " : c2); i += 2; continue }
                if (c == q) { q = ""; out = out c }
                else out = out (nostrings ? " " : c)
                i++
            } else if (c2 == "/*") {
                incomment = 1; i += 2; out = out "  "
            } else if (c2 == "//") {
                break
            } else {
                if (c == "\"" || c == "\047") q = c
                out = out c; i++
            }
        }
        print out
    }' "$1"
}

# grep -n over the stripped text, output as FILE:LINE: text.
scan() { # file mode regex
    strip "$1" "$2" | grep -nE -- "$3" | sed "s|^|$1:|"
}

sources() { # directories...
    for d in "$@"; do
        [ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \)
    done | LC_ALL=C sort
}

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
io_headers='(sys/socket\.h|sys/select\.h|sys/epoll\.h|sys/un\.h|netdb\.h|netinet/[^>"]*|arpa/[^>"]*|poll\.h|uv\.h|winsock2?\.h|ws2tcpip\.h)[>"]'
# A call, not a member (->send) or a longer name (ffb__net_connect).
io_calls='(^|[^[:alnum:]_>.])(socket|connect|accept|bind|listen|send|sendto|sendmsg|recv|recvfrom|recvmsg|poll|ppoll|select|epoll_wait|getaddrinfo|gethostbyname|setsockopt|getsockopt|shutdown)[[:space:]]*\('
alloc_calls='(^|[^[:alnum:]_>.])(malloc|calloc|realloc|reallocarray|free|strdup|strndup|aligned_alloc|posix_memalign)[[:space:]]*\('

# 1. Only the drivers do I/O.
for f in $(sources lib proto include); do
    case "$f" in
    lib/net.c | lib/uv.c | lib/uv_pool.c) continue ;;
    esac
    hits=$(scan "$f" "" "$inc$io_headers")
    if [ "$f" = include/fastfb_uv.h ]; then
        hits=$(printf '%s\n' "$hits" |
            grep -vE ':[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]uv\.h[>"]')
    fi
    [ -n "$hits" ] && fail "$hits
  -> socket/poll/libuv headers belong to the I/O drivers (lib/net.c, lib/uv.c, lib/uv_pool.c) only"
    hits=$(scan "$f" nostrings "$io_calls")
    [ -n "$hits" ] && fail "$hits
  -> socket calls belong to the I/O drivers (lib/net.c, lib/uv.c, lib/uv_pool.c) only"
done

# 2. proto/ is pure.
for f in $(sources proto); do
    hits=$(scan "$f" "" "$inc"'(openssl/[^>"]*|zlib\.h|uv\.h)[>"]')
    [ -n "$hits" ] && fail "$hits
  -> proto/ is pure encode/decode: no OpenSSL, zlib or libuv"
    [ "$f" = proto/xdr.c ] && continue
    hits=$(scan "$f" nostrings "$alloc_calls")
    [ -n "$hits" ] && fail "$hits
  -> proto/ allocates only through the ffbp_writer's allocator (see proto/xdr.c)"
done

# 3. The engine never drives I/O.
loop_calls='(^|[^[:alnum:]_])(ffb__run|ffb__wait|ffb__run_step|ffb__write_out|ffb__io_connect|ffb__io_close)[[:space:]]*\('
tp_use='(->tp->|->tp[[:space:]]*=|ffb__net_transport)'
BLOCKING_CALLERS="lib/run.c lib/blocking.c"
for f in $(sources lib proto | grep '\.c$'); do
    case " $BLOCKING_CALLERS " in
    *" $f "*) ;;
    *)
        hits=$(scan "$f" nostrings "$loop_calls")
        [ -n "$hits" ] && fail "$hits
  -> only the public blocking calls run the blocking loop (lib/run.c); the engine and below never wait"
        ;;
    esac
    case "$f" in
    lib/run.c | lib/net.c) continue ;;
    esac
    hits=$(scan "$f" nostrings "$tp_use")
    [ -n "$hits" ] && fail "$hits
  -> only the blocking loop (lib/run.c) calls the transport"
done

# 4. The engine calls nothing above it.
above="lib/stmt.c lib/tx.c lib/blob.c lib/batch.c lib/cache.c lib/pipeline.c lib/values.c"
names=$(for f in $above; do
    strip "$f" nostrings |
        sed -nE 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *](ffb__[A-Za-z0-9_]+)\(.*/\1/p'
done | LC_ALL=C sort -u | tr '\n' '|' | sed 's/|$//')
if [ -n "$names" ]; then
    for f in lib/engine.c lib/run.c lib/net.c lib/handshake.c lib/wirecrypt.c lib/zstream.c; do
        [ -f "$f" ] || continue
        hits=$(scan "$f" nostrings "(^|[^[:alnum:]_])($names)[[:space:]]*\(")
        [ -n "$hits" ] && fail "$hits
  -> the engine and the transports hand over through hooks; they never call the SQL objects"
    done
fi

if [ "$status" -ne 0 ]; then
    echo "I/O boundary check FAILED (STYLE.md sections 1 and 8)"
else
    echo "I/O boundary check passed: $(sources lib proto include | wc -l) files"
fi
exit "$status"
