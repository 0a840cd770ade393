#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile servers and broken state for `report --upload` / `--flush` (issue 15),
# against stub-server.py on free 127.0.0.1 ports (plain HTTP and HTTPS with
# Python's ssl module, i.e. OpenSSL; certificates made here with `openssl req`):
#  - credentials: a 401 that quotes the Authorization header, the credentials
#    decoded and in every encoding, or a line that cuts the credentials at the
#    bytes scsitune keeps: none of their forms reaches stderr; a password under
#    4 characters: the answer is not quoted at all;
#  - terminal escapes in a server's answer are escaped;
#  - TLS: wrong --ca-file, an expired certificate, a certificate for another
#    host, a CA file that is not PEM: exit 1, one line, the batch kept; the
#    right CA: sent; the host's OpenSSL configuration applies to the upload
#    under --sysroot too (a MinProtocol it sets is honoured);
#  - corrupted spool files under --flush: set aside as NAME.corrupt with a
#    warning naming each, the good batches sent, exit 1;
#  - the spool a symbolic link (issue 29): --upload and --flush refuse it, one
#    line, nothing written or sent where it points; a batch that is a
#    symbolic link is set aside, never read through.
# Usage: test-hostile-upload.sh SCSITUNE FIO_DIR FIXTURE_DIR
set -uo pipefail
bin=$1 fio=$2 fixtures=$3
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON3:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-hostile-upload.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
export SCSITUNE_CONFIG=$T/no-such.conf
fails=0 checks=0
fail() { fails=$((fails + 1)); echo "FAIL $*"; }
# take_port VAR, poll SECONDS CMD..., wait_port PORT
# shellcheck source=tests/service/common.sh
. "$here/common.sh"
# stub PORT [CERT KEY]: start stub-server.py in the background.
stub() {
	"$py" "$here/stub-server.py" "$1" "$T/received.$1" "${@:2}" &
	pids+=($!)
	wait_port "$1" || { echo "FAIL: stub-server.py on port $1 not ready"; exit 1; }
}
run=$fio/fio-3.33-randread-1job-jsonplus.json

# up NAME RC STDERR_REGEX ARGS...: scsitune report ARGS; exit RC, one line on stderr matching.
up() {
	local name=$1 want=$2 re=$3 rc=0
	shift 3
	timeout -k 2 60 "$bin" report "$@" >"$T/out" 2>"$T/err" || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, want $want"
	elif [ "$(grep -vc '^scsitune: upload spooled to\|^scsitune: result set saved to' "$T/err")" -ne 1 ]; then
		fail "$name: stderr is not one line"
	elif ! grep -Eq -- "$re" "$T/err"; then
		fail "$name: stderr does not match /$re/"
	else
		echo "ok   $name: $(grep -vE '^scsitune: (upload spooled|result set saved)' "$T/err" | cut -c1-160)"
		return
	fi
	sed 's/^/  stderr: /' "$T/err" | head -5 | cat -v
}
# leaks NAME SECRET...: no form of any SECRET (as stub-server.py writes them) in stderr.
leaks() {
	local name=$1
	shift
	checks=$((checks + 1))
	if "$py" - "$T/err" "$@" <<'PY'; then
import base64, json, re, sys, urllib.parse
err = open(sys.argv[1], encoding='utf-8', errors='replace').read()
found = []
for s in sys.argv[2:]:
    lower = re.sub(r'%[0-9A-F]{2}', lambda m: m.group(0).lower(), urllib.parse.quote(s, safe=''))
    for f in [s, urllib.parse.quote(s, safe=''), lower, urllib.parse.quote_plus(s),
              json.dumps(s)[1:-1].replace('/', '\\/'), base64.b64encode(s.encode()).decode().rstrip('=')]:
        # the whole form, or its first 8 characters (a form cut at the end of what was kept)
        if f in err or (len(f) >= 8 and f[:8] in err):
            found.append(f)
if found:
    print('  leaked:', found)
sys.exit(1 if found else 0)
PY
		echo "ok   $name: no form of the credentials on stderr"
	else
		fail "$name: credentials on stderr"
	fi
}

take_port port || { echo "FAIL: no free port"; exit 1; }
stub "$port"
url=http://127.0.0.1:$port
st=$T/state

# --- credentials: never echoed, in any encoding ---
pw='s3cr3t "p@ss/w ord" é'
printf 'alice:%s\n' "$pw" >"$T/basic.auth"
printf 'Bearer tok-XYZ/abc+def=\n' >"$T/bearer.auth"
printf 'bob:Qz\n' >"$T/short.auth"
chmod 600 "$T"/*.auth
up "basic auth, 401 quoting it" 1 "HTTP 401: unauthorized: Authorization: Basic \*\*\* \| \*\*\*" \
	--state-dir "$st" --upload "$url/echo/write" --auth-file "$T/basic.auth" "$run"
leaks "basic auth" "alice:$pw" "$pw"
grep -q 'second line' "$T/err" && fail "basic auth: more than the first line of the answer quoted"
up "bearer token, 401 quoting it" 1 "HTTP 401: unauthorized: Authorization: Bearer \*\*\*" \
	--state-dir "$st" --upload "$url/echo/write" --auth-file "$T/bearer.auth" "$run"
leaks "bearer token" "tok-XYZ/abc+def="
up "basic auth cut at 4 KiB" 1 "HTTP 401: x{100}" --state-dir "$st" --upload "$url/long/write" --auth-file "$T/basic.auth" "$run"
leaks "basic auth cut at 4 KiB" "alice:$pw" "$pw"
[ "$(wc -c <"$T/err")" -lt 400 ] || fail "the answer quoted is not bounded (over 400 bytes)"
up "a 2-character password" 1 "HTTP 401 \(the answer is not quoted: the credentials sent are too short to mask in it\)" \
	--state-dir "$st" --upload "$url/echo/write" --auth-file "$T/short.auth" "$run"
leaks "a 2-character password" "bob:Qz"
grep -q 'Qz' "$T/err" && fail "a 2-character password: on stderr"
# The spool and the settings file never hold them.
grep -rqF "$pw" "$st" && fail "the password is in the state directory"

# --- terminal escapes in a server's answer ---
up "escapes in a 400" 1 'HTTP 400: bad\\x1b\[2J\\x1b\]0;pwned\\x07\\xc2\\x9b1m request' \
	--state-dir "$st" --upload "$url/evil/write" "$run"
checks=$((checks + 1))
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/err" && fail "escapes in a 400: control characters on stderr"

# --- corrupted spool files under --flush ---
rm -rf "$st"
up "spool three batches" 0 "uploaded" --state-dir "$st" --upload "$url/ok/write" "$run" >/dev/null
mkdir -p "$st/spool"
for f in "$fio"/fio-3.33-randread-2jobs-json.json "$fio"/fio-3.1-randread-1job-json.json; do
	"$bin" report --state-dir "$st" --upload "http://127.0.0.1:9/write" --upload-timeout 1 "$f" >/dev/null 2>&1
done
mapfile -t batches < <(ls "$st/spool"/*.lp)
[ "${#batches[@]}" -eq 2 ] || fail "want 2 spooled batches, have ${#batches[@]}"
# One truncated, one replaced by another's content (name and content disagree), one made a FIFO.
truncate -s 10 "${batches[0]}"
cp "$run" "$st/spool/0123456789abcdef.lp"
mkfifo "$st/spool/fedcba9876543210.lp"
cp "${batches[1]}" "$T/good-batch"
: >"$T/received.$port"
timeout -k 2 60 "$bin" report --flush --state-dir "$st" --upload "$url/ok/write" >"$T/out" 2>"$T/err"
rc=$?
checks=$((checks + 1))
if [ "$rc" -ne 1 ]; then
	fail "--flush with corrupted batches: exit $rc, want 1"
	sed 's/^/  stderr: /' "$T/err"
fi
for b in "${batches[0]}" "$st/spool/0123456789abcdef.lp" "$st/spool/fedcba9876543210.lp"; do
	checks=$((checks + 1))
	grep -q "warning: $b: corrupt batch set aside as $b.corrupt" "$T/err" || fail "--flush: no warning naming $b"
	[ -e "$b.corrupt" ] && [ ! -e "$b" ] || fail "--flush: $b not set aside as $b.corrupt"
done
checks=$((checks + 1))
cmp -s "$T/good-batch" "$T/received.$port" || fail "--flush: the good batch was not sent as it was spooled"
[ -e "${batches[1]}" ] && fail "--flush: the good batch is still in the spool"
grep -q "3 corrupt batches set aside" "$T/err" || fail "--flush: the summary does not count the corrupt batches"
# Set aside, they stay out of the next flush.
up "--flush after" 0 "spool is empty" --flush --state-dir "$st" --upload "$url/ok/write"

# --- the spool a symbolic link (issue 29): never followed ---
good_name=$(basename "${batches[1]}")
rm -rf "$st" "$T/elsewhere"
mkdir -p "$st" "$T/elsewhere"
ln -s "$T/elsewhere" "$st/spool"
: >"$T/received.$port"
up "spool a symbolic link: --upload" 1 "^scsitune: --state-dir $st: spooling the upload: a symbolic link: refused$" \
	--state-dir "$st" --upload "$url/ok/write" "$run"
checks=$((checks + 1))
[ -z "$(ls -A "$T/elsewhere")" ] || fail "spool a symbolic link: a batch was written where it points: $(ls "$T/elsewhere")"
[ -s "$T/received.$port" ] && fail "spool a symbolic link: something was sent"
cp "$T/good-batch" "$T/elsewhere/$good_name"
up "spool a symbolic link: --flush" 1 "^scsitune: --state-dir $st: reading $st/spool: a symbolic link: refused$" \
	--flush --state-dir "$st" --upload "$url/ok/write"
checks=$((checks + 1))
[ -s "$T/received.$port" ] && fail "spool a symbolic link: --flush sent the batch where it points"
cmp -s "$T/good-batch" "$T/elsewhere/$good_name" || fail "spool a symbolic link: --flush touched the batch where it points"
# A batch that is a symbolic link: set aside, never read through (nor sent).
rm "$st/spool" && mkdir "$st/spool"
ln -s "$T/elsewhere/$good_name" "$st/spool/$good_name"
timeout -k 2 60 "$bin" report --flush --state-dir "$st" --upload "$url/ok/write" >"$T/out" 2>"$T/err"
rc=$?
checks=$((checks + 1))
if [ "$rc" -ne 1 ] || ! grep -q "warning: $st/spool/$good_name: corrupt batch set aside as $st/spool/$good_name.corrupt (a symbolic link: refused)" "$T/err"; then
	fail "a batch that is a symbolic link: exit $rc: $(head -2 "$T/err")"
elif [ -s "$T/received.$port" ] || ! cmp -s "$T/good-batch" "$T/elsewhere/$good_name"; then
	fail "a batch that is a symbolic link: sent, or its target touched"
else
	echo "ok   a batch that is a symbolic link: set aside, not sent"
fi

# --- TLS against a real TLS server ---
c=$T/tls
mkdir "$c"
ossl() { openssl "$@" 2>>"$c/openssl.log" >/dev/null || { echo "FAIL: openssl $*"; cat "$c/openssl.log"; exit 1; }; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$c/ca.key" -out "$c/ca.crt" -subj /CN=scsitune-test-ca -days 30
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$c/other.key" -out "$c/other.crt" -subj /CN=other-ca -days 30
# server CERT NAME SAN DAYS: a key and a certificate signed by the test CA.
server() {
	ossl req -newkey rsa:2048 -nodes -keyout "$c/$1.key" -out "$c/$1.csr" -subj "/CN=$1"
	printf 'subjectAltName=%s\n' "$2" >"$c/$1.ext"
	ossl x509 -req -in "$c/$1.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -out "$c/$1.crt" -days "$3" \
		-extfile "$c/$1.ext"
}
server good IP:127.0.0.1 30
server expired IP:127.0.0.1 -1 # notAfter before now
server wronghost DNS:other.example 30
printf 'not a certificate\n' >"$c/garbage.pem"
take_port p_good && take_port p_exp && take_port p_wrong || { echo "FAIL: no free port"; exit 1; }
stub "$p_good" "$c/good.crt" "$c/good.key"
stub "$p_exp" "$c/expired.crt" "$c/expired.key"
stub "$p_wrong" "$c/wronghost.crt" "$c/wronghost.key"
rm -rf "$st"
tls() { up "$@"; ls "$st/spool"/*.lp >/dev/null 2>&1 || fail "$1: the batch is not kept in the spool"; }
up "TLS: the right CA" 0 "uploaded 1 point" --state-dir "$st" --upload "https://127.0.0.1:$p_good/ok/write" --ca-file "$c/ca.crt" "$run"
tls "TLS: no --ca-file (not in the system's store)" 1 "certificate|self.signed|unable to get local issuer" \
	--state-dir "$st" --upload "https://127.0.0.1:$p_good/ok/write" "$run"
tls "TLS: wrong --ca-file" 1 "SSL certificate problem: unable to get local issuer certificate; not sent, kept in spool" \
	--state-dir "$st" --upload "https://127.0.0.1:$p_good/ok/write" --ca-file "$c/other.crt" "$run"
tls "TLS: expired certificate" 1 "SSL certificate problem: certificate has expired; not sent, kept in spool" \
	--state-dir "$st" --upload "https://127.0.0.1:$p_exp/ok/write" --ca-file "$c/ca.crt" "$run"
tls "TLS: certificate for another host" 1 "(no alternative certificate subject name matches|does not match).*127\.0\.0\.1.?; not sent, kept in spool" \
	--state-dir "$st" --upload "https://127.0.0.1:$p_wrong/ok/write" --ca-file "$c/ca.crt" "$run"
tls "TLS: a CA file that is not PEM" 1 "(error setting certificate|problem with the SSL CA cert).*; not sent, kept in spool" \
	--state-dir "$st" --upload "https://127.0.0.1:$p_good/ok/write" --ca-file "$c/garbage.pem" "$run"
up "TLS: --flush with the right CA" 0 "uploaded" --flush --state-dir "$st" --upload "https://127.0.0.1:$p_good/ok/write" --ca-file "$c/ca.crt"
# The host's OpenSSL configuration governs the upload, under --sysroot too (where
# the context keeps libcrypto from loading it at its first use): a MinProtocol of
# TLSv1.3 against a server that speaks only TLSv1.2 fails; without it, it works.
tree=$T/root
mkdir "$tree"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$tree"
take_port p_12 || { echo "FAIL: no free port"; exit 1; }
"$py" - "$p_12" "$c/good.crt" "$c/good.key" "$T/received.$p_12" <<'PY' &
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length', 0)))
        self.send_response(204); self.send_header('Content-Length', '0'); self.end_headers()
s = http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.maximum_version = ssl.TLSVersion.TLSv1_2
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
s.socket = ctx.wrap_socket(s.socket, server_side=True)
s.serve_forever()
PY
pids+=($!)
wait_port "$p_12" || { echo "FAIL: the TLS 1.2 server not ready"; exit 1; }
cat >"$c/tls13.cnf" <<'EOF'
openssl_conf = init
[init]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
MinProtocol = TLSv1.3
EOF
for where in live sysroot; do
	sr=()
	[ "$where" = sysroot ] && sr=(--sysroot "$tree" --host-facts) # FILEs uploaded under --sysroot carry the tree's identity
	rm -rf "$st"
	up "TLS 1.2 server, the default configuration ($where)" 0 "uploaded" "${sr[@]}" --state-dir "$st" \
		--upload "https://127.0.0.1:$p_12/ok/write" --ca-file "$c/ca.crt" "$run"
done
for where in live sysroot; do
	sr=()
	[ "$where" = sysroot ] && sr=(--sysroot "$tree" --host-facts) # FILEs uploaded under --sysroot carry the tree's identity
	rm -rf "$st"
	# A failed handshake is retryable (curl's "SSL connect error"): 3 tries, then exit 3.
	OPENSSL_CONF=$c/tls13.cnf up "TLS 1.2 server, the host's MinProtocol TLSv1.3 ($where)" 3 \
		"alert protocol version; not sent, kept in spool" "${sr[@]}" --state-dir "$st" \
		--upload "https://127.0.0.1:$p_12/ok/write" --ca-file "$c/ca.crt" "$run"
done

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
