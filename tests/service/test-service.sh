#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# service tier: `scsitune report --upload` against real servers from Debian,
# started here on 127.0.0.1, on free ports, with data under a temp dir:
# VictoriaMetrics (dedup on) and InfluxDB 1.x (auth off; a second one with
# auth on). Installs nothing (scripts/install-deps --test does); fails when a
# server is not installed (a tier that cannot run is never counted as a pass).
#  - upload, read back through each server's query API, compare every tag,
#    field and timestamp with the report's JSON document;
#  - server down: exit 3, one line, the batch in the spool; restart, --flush:
#    spool empty, exactly one copy of each run; the same runs twice: one copy;
#  - the server back during the backoff: sent on a retry; no invalid rows;
#  - a stub answering 503 (3 tries, exit 3) and 400 (one try, exit 1);
#  - a stub that accepts the connection and never answers: the upload timeout
#    (--upload-timeout, settings file timeout=) bounds it, exit 3, batch kept;
#  - InfluxDB 2.x write API (/api/v2/write?org=&bucket=, Token auth) against
#    VictoriaMetrics (read back) and a stub (path and Authorization header);
#    InfluxDB 2 itself is not in Debian 12 and is untested;
#  - a bearer token through vmauth (wrong token 400 from vmauth 1.79, right token flushes);
#  - InfluxDB with auth: wrong password → 401, exit 1, data kept in the spool;
#    right password → flushed; a world-readable auth file is refused;
#  - TLS with a self-signed CA: without --ca-file a verification error (exit 1,
#    spooled), with it the flush succeeds;
#  - the settings file: url/auth_file from --config, unknown key → FILE:LINE;
#  - valgrind-clean on the TLS send path.
# Every server is stopped at the end, also on failure. Ports come from
# take_port (common.sh: no other test takes them meanwhile); what is read back
# from a server is judged once it shows every point written (check-points.py
# asks again up to a deadline), and no wait is a fixed sleep.
# Usage: test-service.sh SCSITUNE FIO_FIXTURES
set -uo pipefail
bin=$(realpath "$1") fx=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
py=${PYTHON3:-python3}
for p in victoria-metrics influxd openssl curl; do
	command -v "$p" >/dev/null || { echo "FAIL: $p not installed (scripts/install-deps --test installs it)"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-service.XXXXXX")
declare -A pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap "exit 143" TERM INT
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }
check() { # NAME COMMAND...: passes when COMMAND does
	checks=$((checks + 1))
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then pass "$name: $(tail -1 "$T/check.out")"; else fail "$name:"; sed 's/^/  /' "$T/check.out" | head -20; fi
}
# take_port VAR, poll SECONDS CMD..., wait_http URL [CURL ARGS], wait_port PORT
# shellcheck source=tests/service/common.sh
. "$here/common.sh"

start_vm() { # NAME PORT [ARGS...]
	local name=$1 port=$2
	shift 2
	victoria-metrics -storageDataPath="$T/$name" -httpListenAddr="127.0.0.1:$port" -retentionPeriod=100y \
		-search.latencyOffset=0s -dedup.minScrapeInterval=1ms -loggerLevel=WARN "$@" >>"$T/$name.log" 2>&1 &
	pids[$name]=$!
}
stop() { # NAME
	kill "${pids[$1]}" 2>/dev/null
	wait "${pids[$1]}" 2>/dev/null
	unset "pids[$1]"
}
start_influx() { # NAME PORT AUTH
	local name=$1 port=$2 auth=$3 rpc_port
	take_port rpc_port || return 1
	cat >"$T/$name.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$rpc_port"
[meta]
  dir = "$T/$name/meta"
[data]
  dir = "$T/$name/data"
  wal-dir = "$T/$name/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:$port"
  auth-enabled = $auth
  log-enabled = false
[continuous_queries]
  enabled = false
CONF
	influxd run -config "$T/$name.conf" >"$T/$name.log" 2>&1 &
	pids[$name]=$!
}

# report RC STDERR_REGEX ARGS...: run scsitune, check the exit code and stderr.
report() {
	local want=$1 re=$2 rc=0
	shift 2
	checks=$((checks + 1))
	"$bin" report "$@" >"$T/out" 2>"$T/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "report $*: exit $rc, want $want"; sed 's/^/  stderr: /' "$T/err" | head -5
	elif ! grep -Eq -- "$re" "$T/err"; then
		fail "report $*: stderr does not match /$re/"; sed 's/^/  stderr: /' "$T/err" | head -5
	else
		pass "report ${*: -1} ... → exit $rc: $(grep -E -- "$re" "$T/err" | head -1 | cut -c1-150)"
	fi
}
spooled() { # NAME DIR N: DIR/spool holds N batches
	local n
	n=$(find "$2/spool" -name '*.lp' 2>/dev/null | wc -l)
	checks=$((checks + 1))
	if [ "$n" -eq "$3" ]; then pass "$1: $n batch(es) in the spool"; else fail "$1: $n batch(es) in the spool, want $3"; fi
}

# Four runs of one job (a set that mixes jobs is never uploaded): the recorded json
# and json+ outputs of the same fio 3.33 job, and two more varied from the json+
# one (tests/fleet/vary-fio.py: IOPS scaled, another start time).
runs=("$fx"/fio-3.33-randread-2jobs-json.json "$fx"/fio-3.33-randread-2jobs-jsonplus.json
	"$T"/run3.json "$T"/run4.json)
"$py" "$here/../fleet/vary-fio.py" "$fx"/fio-3.33-randread-2jobs-jsonplus.json \
	"$T/run3.json:0.93:1764487200000" "$T/run4.json:1.04:1764487210000" || { echo "FAIL: vary-fio.py"; exit 1; }
"$bin" report -o json "${runs[@]}" >"$T/doc.json" || { echo "FAIL: report -o json"; exit 1; }

for v in vm_port ix_port ixa_port tls_port stub_port silent_port auth_port; do
	take_port "$v" || { echo "FAIL: no free port"; exit 1; }
done
start_vm vm "$vm_port"
start_influx influx "$ix_port" false || { echo "FAIL: influx config"; exit 1; }
start_influx influx-auth "$ixa_port" true || { echo "FAIL: influx config"; exit 1; }
vm=http://127.0.0.1:$vm_port ix=http://127.0.0.1:$ix_port ixa=http://127.0.0.1:$ixa_port
wait_http "$vm/health" && wait_http "$ix/ping" && wait_http "$ixa/ping" || { echo "FAIL: servers not ready"; exit 1; }
curl -fsS -XPOST "$ix/query" --data-urlencode 'q=CREATE DATABASE scsitune' >/dev/null
# The first user of an auth-enabled InfluxDB may be created without credentials.
curl -fsS -XPOST "$ixa/query" --data-urlencode "q=CREATE USER admin WITH PASSWORD 'adm1n' WITH ALL PRIVILEGES" >/dev/null
curl -fsS -XPOST -u admin:adm1n "$ixa/query" --data-urlencode 'q=CREATE DATABASE scsitune' >/dev/null
curl -fsS -XPOST -u admin:adm1n "$ixa/query" --data-urlencode "q=CREATE USER writer WITH PASSWORD 's3cret'" >/dev/null
curl -fsS -XPOST -u admin:adm1n "$ixa/query" --data-urlencode 'q=GRANT WRITE ON scsitune TO writer' >/dev/null

# --- Upload and read back.
st=$T/state
report 0 'uploaded 4 points in 1 batch' --phase base --state-dir "$st" --upload "$vm/write" "${runs[@]}"
spooled "vm upload" "$st" 0
check "vm read back" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" base
report 0 'uploaded 4 points' --phase base --state-dir "$st" --upload "$ix/write?db=scsitune" "${runs[@]}"
check "influx read back" "$py" "$here/check-points.py" influx "$ix" "$T/doc.json" base

# InfluxDB 2.x write API as VictoriaMetrics serves it (Debian has no InfluxDB 2;
# VictoriaMetrics ignores the token and the bucket): every value read back.
printf 'Token tok-v2\n' >"$T/vm-v2.auth"
chmod 600 "$T/vm-v2.auth"
report 0 'uploaded 4 points in 1 batch' --phase v2 --state-dir "$st" --upload "$vm/api/v2/write?org=scsitune&bucket=fleet" \
	--auth-file "$T/vm-v2.auth" "${runs[@]}"
check "vm /api/v2/write read back" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" v2

# --- The same runs again: still one copy (VictoriaMetrics dedup, InfluxDB overwrite).
report 0 'uploaded 4 points' --phase base --state-dir "$st" --upload "$vm/influx/write" "${runs[@]}"
report 0 'uploaded 4 points' --phase base --state-dir "$st" --upload "$ix/write?db=scsitune" "${runs[@]}"
check "vm after a second upload" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" base
check "influx after a second upload" "$py" "$here/check-points.py" influx "$ix" "$T/doc.json" base

# --- Server down: spooled, exit 3; restart; flush; exactly one copy.
stop vm
report 3 'not sent, kept in spool: 1 batch in ' --phase down --state-dir "$st" --upload "$vm/write" "${runs[@]}"
checks=$((checks + 1))
# (The four runs are different fio jobs on purpose: report warns that they are not comparable, first.)
[ "$(grep -vc -e '^scsitune: result set saved to ' -e '^scsitune: warning: runs not comparable: ' "$T/err")" -eq 1 ] &&
	pass "down: one error line (besides 'result set saved' and the comparability warnings)" || { fail "down: stderr:"; cat "$T/err"; }
spooled "vm down" "$st" 1
checks=$((checks + 1))
[ "$(wc -l <"$(find "$st/spool" -name '*.lp')")" -eq 4 ] && pass "spool file: 4 lines" || fail "spool file: $(cat "$st/spool/"*.lp)"
report 3 'kept in spool: 1 batch' --state-dir "$st" --flush --upload "$vm/write"
start_vm vm "$vm_port"
wait_http "$vm/health" || fail "vm restart"
report 0 'uploaded 4 points in 1 batch' --state-dir "$st" --flush --upload "$vm/write"
spooled "after flush" "$st" 0
report 0 'spool is empty' --state-dir "$st" --flush --upload "$vm/write"
check "vm after restart and flush (phase down)" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" down
check "vm phase base still one copy" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" base

# --- The server comes back during the backoff: the retry gets it through.
# Not by timing: report -v says "...; retrying in 1 s" on stderr (a pipe read
# here) once its first try was refused, before its backoff; it is stopped
# (SIGSTOP) there, the server started and asked until it answers, then the
# report continued (SIGCONT): its next try finds the server up.
stop vm
mkfifo "$T/retry.fifo"
"$bin" report -v --phase retry --state-dir "$st" --upload "$vm/write" "${runs[@]}" >/dev/null 2>"$T/retry.fifo" &
retry_pid=$!
exec {retry_fd}<"$T/retry.fifo"
stopped=
while IFS= read -r -t 60 -u "$retry_fd" line; do
	printf '%s\n' "$line" >>"$T/retry.err"
	case $line in *'; retrying in '*)
		kill -STOP "$retry_pid" && stopped=1
		break ;;
	esac
done
cat <&"$retry_fd" >>"$T/retry.err" &
drain_pid=$!
exec {retry_fd}<&-
start_vm vm "$vm_port"
wait_http "$vm/health" || fail "vm restart (retry)"
[ -n "$stopped" ] && kill -CONT "$retry_pid"
rc=0
wait "$retry_pid" || rc=$?
wait "$drain_pid"
checks=$((checks + 1))
if [ -n "$stopped" ] && [ "$rc" -eq 0 ] && grep -Eq "upload to $vm/write: .*(refused|connect).*; retrying in 1 s" "$T/retry.err" &&
	grep -q 'uploaded 4 points' "$T/retry.err"; then
	pass "server back during the backoff: refused, then sent on a retry"
else
	fail "retry: exit $rc, stopped in the backoff: ${stopped:-no}"; cat "$T/retry.err"
fi
spooled "after the retry" "$st" 0
check "vm after the retry" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" retry
checks=$((checks + 1))
invalid=$(curl -fsS "$vm/metrics" | awk '/^vm_rows_invalid_total\{type="influx"\}/ {print $2}')
[ "${invalid:-0}" = 0 ] && pass "vm: no invalid line-protocol rows" || fail "vm: vm_rows_invalid_total{type=influx} = $invalid"

# --- 5xx is retried (3 tries), then kept; 400 is permanent at once.
"$py" - "$stub_port" "$T/stub.hits" <<'PY' &
import http.server, sys
port, hits = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        open(hits, "a").write(self.path + "\n")
        if self.path.startswith("/api/v2/write"):  # record what an InfluxDB 2.x write carries
            open(hits + ".auth", "a").write(self.headers.get("Authorization", "(none)") + "\n")
            self.send_response(204)
            self.end_headers()
            return
        code = 400 if "db=bad" in self.path else 503
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b'{"error":"stub says %d"}\nsecond line\n' % code)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
pids[stub]=$!
wait_port "$stub_port" || fail "stub not ready"
ss=$T/state-stub
report 3 'HTTP 503: \{"error":"stub says 503"\}; not sent, kept in spool: 1 batch' --phase stub --state-dir "$ss" \
	--upload "http://127.0.0.1:$stub_port/write?db=x" "${runs[@]}"
checks=$((checks + 1))
[ "$(grep -c 'db=x&precision=ms$' "$T/stub.hits")" -eq 3 ] && pass "503: 3 tries" || fail "503 tries: $(cat "$T/stub.hits")"
: >"$T/stub.hits"
report 1 'HTTP 400: \{"error":"stub says 400"\}; not sent, kept in spool: 1 batch' --state-dir "$ss" --flush \
	--upload "http://127.0.0.1:$stub_port/write?db=bad"
checks=$((checks + 1))
[ "$(wc -l <"$T/stub.hits")" -eq 1 ] && pass "400: one try" || fail "400 tries: $(cat "$T/stub.hits")"
spooled "503, then 400" "$ss" 1
# InfluxDB 2.x write API: /api/v2/write?org=&bucket=, "Authorization: Token ..." from the auth file.
umask 077
printf 'Token tok-v2-secret\n' >"$T/v2.auth"
: >"$T/stub.hits"
report 0 'uploaded 4 points in 1 batch' --phase v2stub --state-dir "$T/state-v2stub" \
	--upload "http://127.0.0.1:$stub_port/api/v2/write?org=scsitune&bucket=fleet" --auth-file "$T/v2.auth" "${runs[@]}"
checks=$((checks + 1))
[ "$(cat "$T/stub.hits")" = "/api/v2/write?org=scsitune&bucket=fleet&precision=ms" ] &&
	[ "$(cat "$T/stub.hits.auth")" = "Token tok-v2-secret" ] && pass "v2 write: path, precision=ms, Authorization: Token" ||
	fail "v2 write: $(cat "$T/stub.hits" "$T/stub.hits.auth")"
stop stub

# --- A server that accepts the connection and never answers: the upload timeout
# (--upload-timeout, or timeout= in the settings file) bounds each of the 3 tries:
# exit 3, one line naming the URL and the timeout, the batch kept. Bound: 3 tries
# x 1 s + 1 s + 2 s of backoff = 6 s; the default (30 s) would take over 90 s.
# The server says it listens with a file, not by a probe connection: a probe
# it accepted (and logged) only after the log was emptied counted as a 4th try
# beside stress-ng. Its log is read once it holds the 3 tries it must.
: >"$T/silent.conns"
"$py" - "$silent_port" "$T/silent.conns" <<'PY' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
open(sys.argv[2] + ".ready", "w").close()
held = []
while True:
    c, _ = s.accept()
    held.append(c)  # keep it open, read nothing, answer nothing
    open(sys.argv[2], "a").write("conn\n")
PY
pids[silent]=$!
poll 60 test -e "$T/silent.conns.ready" || fail "silent server not ready"
silent=http://127.0.0.1:$silent_port/write
sq=$T/state-silent
t0=$(date +%s%N)
report 3 "^scsitune: upload to $silent: no answer within the 1 s upload timeout \(.*\); not sent, kept in spool: 1 batch in $sq/spool; to send it later: scsitune report --flush --upload $silent --state-dir $sq$" \
	--phase silent --state-dir "$sq" --upload "$silent" --upload-timeout 1 "${runs[@]}"
t1=$(date +%s%N)
checks=$((checks + 1))
[ "$(grep -vc -e '^scsitune: result set saved to ' -e '^scsitune: warning: runs not comparable: ' "$T/err")" -eq 1 ] && pass "silent server: one error line" ||
	{ fail "silent server: stderr:"; cat "$T/err"; }
spooled "silent server" "$sq" 1
checks=$((checks + 1))
ms=$(((t1 - t0) / 1000000))
[ "$ms" -ge 3000 ] && [ "$ms" -lt 30000 ] && pass "silent server: gave up after $ms ms (3 tries of 1 s + 3 s backoff; bound 30 s)" ||
	fail "silent server: took $ms ms (want 3 s to 30 s)"
checks=$((checks + 1))
conns() { [ "$(wc -l <"$T/silent.conns")" -ge 3 ]; }
poll 60 conns
[ "$(wc -l <"$T/silent.conns")" -eq 3 ] && pass "silent server: 3 connections (tries)" || fail "silent server: $(wc -l <"$T/silent.conns") connections"
# The same from the settings file; the option wins over it.
printf '[upload]\nurl = %s\ntimeout = 2\n' "$silent" >"$T/silent.conf"
report 3 "no answer within the 2 s upload timeout .*kept in spool: 1 batch" --state-dir "$sq" --flush --config "$T/silent.conf"
report 3 "no answer within the 1 s upload timeout .*kept in spool: 1 batch" --state-dir "$sq" --flush --config "$T/silent.conf" \
	--upload-timeout 1
spooled "silent server, after two flushes" "$sq" 1
stop silent

# --- Bearer token: vmauth in front of VictoriaMetrics.
printf 'users:\n  - bearer_token: "tok-123"\n    url_prefix: "%s"\n' "$vm" >"$T/vmauth.yml"
vmauth -auth.config="$T/vmauth.yml" -httpListenAddr="127.0.0.1:$auth_port" -loggerLevel=WARN >"$T/vmauth.log" 2>&1 &
pids[vmauth]=$!
wait_http "http://127.0.0.1:$auth_port/health" || fail "vmauth not ready"
umask 077
printf 'Bearer tok-999\n' >"$T/badtok.auth"
printf 'Bearer tok-123\n' >"$T/tok.auth"
sb=$T/state-bearer
report 1 'HTTP 40[01]: .*kept in spool: 1 batch' --phase bearer --state-dir "$sb" --upload "http://127.0.0.1:$auth_port/write" \
	--auth-file "$T/badtok.auth" "${runs[@]}"
checks=$((checks + 1))
grep -q 'tok-999' "$T/err" && fail "the refused token is shown: $(cat "$T/err")" || pass "the refused token is not shown"
report 0 'uploaded 4 points' --state-dir "$sb" --flush --upload "http://127.0.0.1:$auth_port/write" --auth-file "$T/tok.auth"
check "vm behind vmauth (bearer) read back" "$py" "$here/check-points.py" vm "$vm" "$T/doc.json" bearer

# --- Credentials.
umask 077
printf 'writer:wrong\n' >"$T/bad.auth"
printf 'writer:s3cret\n' >"$T/good.auth"
printf 'writer:s3cret\n' >"$T/open.auth"
chmod 644 "$T/open.auth"
sa=$T/state-auth
report 1 "^scsitune: --auth-file $T/open.auth: readable by others" --phase auth --state-dir "$sa" \
	--upload "$ixa/write?db=scsitune" --auth-file "$T/open.auth" "${runs[@]}"
checks=$((checks + 1))
[ ! -e "$sa" ] && pass "world-readable auth file: nothing saved" || fail "world-readable auth file: $(find "$sa")"
report 1 'HTTP 401: .*authorization failed.*; not sent, kept in spool: 1 batch' --phase auth --state-dir "$sa" \
	--upload "$ixa/write?db=scsitune" --auth-file "$T/bad.auth" "${runs[@]}"
spooled "401" "$sa" 1
report 1 'HTTP 401' --phase auth --state-dir "$sa" --upload "$ixa/write?db=scsitune" "${runs[@]}"
report 0 'uploaded 4 points' --state-dir "$sa" --flush --upload "$ixa/write?db=scsitune" --auth-file "$T/good.auth"
spooled "401 then the right password" "$sa" 0
check "influx with auth read back" "$py" "$here/check-points.py" influx "$ixa" "$T/doc.json" auth --user admin:adm1n

# --- TLS with a self-signed CA.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=scsitune-test-ca -keyout "$T/ca.key" -out "$T/ca.pem" \
	-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$T/srv.key" -out "$T/srv.csr" >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$T/srv.ext"
openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
	-extfile "$T/srv.ext" -out "$T/srv.pem" >/dev/null 2>&1
start_vm vm-tls "$tls_port" -tls -tlsCertFile="$T/srv.pem" -tlsKeyFile="$T/srv.key"
tls=https://127.0.0.1:$tls_port
wait_http "$tls/health" --cacert "$T/ca.pem" || fail "vm-tls not ready"
stl=$T/state-tls
report 1 '(certificate|SSL).*; not sent, kept in spool: 1 batch' --phase tls --state-dir "$stl" \
	--upload "$tls/write" "${runs[@]}"
spooled "TLS without the CA" "$stl" 1
report 0 'uploaded 4 points' --state-dir "$stl" --flush --upload "$tls/write" --ca-file "$T/ca.pem"
check "vm over TLS read back" "$py" "$here/check-points.py" vm "$tls" "$T/doc.json" tls --cacert "$T/ca.pem"

# --- valgrind on the whole send path: TLS, basic auth, 2xx, spool removal.
# CMake sets SCSITUNE_VALGRIND to valgrind's path on the plain build and to
# "" on the ASan build (the sanitizer runtime and valgrind exclude each other;
# there ASan itself checks this path). Unset means run by hand: use PATH.
if [ -z "${SCSITUNE_VALGRIND-x}" ]; then
	echo "note valgrind: not on the ASan build (the plain build's service tier runs it)"
else
	valgrind=${SCSITUNE_VALGRIND:-valgrind}
	command -v "$valgrind" >/dev/null || fail "valgrind: $valgrind not found (scripts/install-deps --test)"
	checks=$((checks + 1))
	rc=0
	"$valgrind" -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible "$bin" report --phase vg --state-dir "$T/state-vg" \
		--upload "$tls/write" --ca-file "$T/ca.pem" --auth-file "$T/good.auth" "${runs[@]}" >/dev/null 2>"$T/vg" || rc=$?
	if [ "$rc" -eq 0 ] && ! grep -q '^==[0-9]*==' "$T/vg"; then pass "valgrind: upload over TLS clean"; else
		fail "valgrind: exit $rc"; head -30 "$T/vg"; fi
fi

# --- Settings file.
printf '[upload]\nurl = %s\nauth_file = %s\n' "$ixa/write?db=scsitune" "$T/good.auth" >"$T/scsitune.conf"
report 0 'uploaded 4 points' --phase conf --state-dir "$T/state-conf" --config "$T/scsitune.conf" "${runs[@]}"
check "influx with auth from the settings file" "$py" "$here/check-points.py" influx "$ixa" "$T/doc.json" conf --user admin:adm1n
printf '[upload]\nurl = %s\n# comment\nuser = writer\n' "$vm/write" >"$T/bad.conf"
report 1 "^scsitune: $T/bad.conf:4: unknown key 'upload.user'$" --state-dir "$T/state-conf" --flush --config "$T/bad.conf"
report 1 "^scsitune: $T/missing.conf: No such file or directory$" --state-dir "$T/state-conf" --flush --config "$T/missing.conf"
# A bad --upload URL is a usage error (64), like any bad option value.
report 64 'sets precision= itself' --state-dir "$T/state-conf" --flush --upload "$vm/write?precision=ns"

echo "$checks checks, $fails failed"
exit $((fails > 0))
