#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report --html in a real browser: Debian's headless Chromium loads the reports of
# the committed fio outputs, SPEC.md's seed table (--compare), a hostile job name,
# and a fleet view (report --query --html of six hosts, served by
# tests/fleet/stub-service.py on 127.0.0.1) from file://, and
#  - the DOM it built (--dump-dom) passes check-html.py: well-formed, nothing that
#    loads or runs, every number equal to the -o json document's;
#  - its console stayed empty (no error, no CSP violation);
#  - its network log has no request made by the page (Chromium's own background
#    requests, initiator "not an origin", are not the page's);
#  - a screenshot of each is saved in OUT_DIR for a person to look at.
# The checks catch a broken copy: a page with a script writing to the console and
# an <img> from the network (its CSP removed) fails both.
# Usage: test-html-browser.sh SCSITUNE FIO_FIXTURES CHECK_HTML_PY OUT_DIR STUB_SERVICE_PY
set -uo pipefail
bin=$(realpath "$1") fixtures=$(realpath "$2") check=$(realpath "$3") out=$4 stubpy=$(realpath "$5")
py=${PYTHON3:-python3}
chromium=$(command -v chromium) || {
	echo "FAIL: chromium not installed (scripts/install-deps --test installs it)"
	exit 1
}
mkdir -p "$out" && out=$(realpath "$out")
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-browser.XXXXXX")
stub_pid=
trap '[ -z "$stub_pid" ] || kill "$stub_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }

# browse NAME HTML: the DOM, console and network log of HTML in headless Chromium,
# under $work/NAME.*, and a screenshot in $out/NAME.png: one launch, a fresh profile.
browse() {
	local name=$1 html=$2
	local flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/profile-$name" --no-first-run
		--disable-background-networking --disable-component-update --disable-sync --disable-default-apps
		--disable-extensions --hide-scrollbars --enable-logging=stderr --v=0)
	timeout 120 "$chromium" "${flags[@]}" --log-net-log="$work/$name.net.json" --window-size=1150,2400 \
		--screenshot="$out/$name.png" --dump-dom "file://$html" >"$work/$name.dom.html" 2>"$work/$name.console" ||
		fail "$name: chromium --dump-dom --screenshot: exit $?"
}

# quiet NAME: no console message, no request by the page.
quiet() {
	local name=$1
	checks=$((checks + 1))
	if grep -q ':CONSOLE' "$work/$name.console"; then
		fail "$name: console messages:"; grep ':CONSOLE' "$work/$name.console" | head -5
	else
		pass "$name: console empty"
	fi
	checks=$((checks + 1))
	if "$py" - "$work/$name.net.json" <<'PY'; then pass "$name: no network request by the page"; else fail "$name: the page made network requests"; fi
import json, sys
d = json.load(open(sys.argv[1]))
types = {v: k for k, v in d["constants"]["logEventTypes"].items()}
# A request's start carries its url and initiator (the end of the event carries neither).
page = sorted({e["params"]["url"] for e in d["events"]
               if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in e.get("params", {})
               and e["params"].get("initiator") != "not an origin"})
for u in page:
    print("  request by the page: " + u)
sys.exit(1 if page else 0)
PY
}

cd "$fixtures" || exit 1
# Four different jobs (numjobs, job mix) and fio versions: a set only with --allow-mixed.
set4=(--allow-mixed fio-3.33-randread-2jobs-json.json fio-3.33-randread-2jobs-jsonplus.json
	fio-3.33-randread-1job-jsonplus.json fio-3.33-global-mixed-json.json)
"$bin" report -o json --html "$work/fixtures.html" "${set4[@]}" >"$work/fixtures.json" 2>/dev/null ||
	fail "report --html on the fixtures"

# SPEC.md's seed table (the shape of the seeds' measurements): baseline, then tuned --compare.
seed=$work/seed
mkdir -p "$seed"
mkrun() { # FILE KIOPS START_S
	printf '{"fio version": "fio-3.33", "timestamp": %s, "timestamp_ms": %s000, "time": "seed",\n' "$3" "$3" >"$1"
	printf ' "jobs": [{"jobname": "seed", "groupid": 0, "error": 0, "read": {"io_bytes": 0, "bw": %s, "iops": %s, "runtime": 60000}, "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0}}]}\n' \
		"$(($2 * 4000))" "$(($2 * 1000))" >>"$1"
}
i=0
for k in 4200 6700 6400 6500 6450 6460 6470 6480 6440 6450; do
	i=$((i + 1)); mkrun "$seed/base$i.json" "$k" $((1700000000 + i * 100))
done
i=0
for k in 7000 7700 7350 7300 7400; do
	i=$((i + 1)); mkrun "$seed/tuned$i.json" "$k" $((1700100000 + i * 100))
done
(cd "$seed" && "$bin" report --phase baseline --state-dir "$work/st" base*.json >/dev/null 2>&1) || fail "seed baseline"
(cd "$seed" && "$bin" report -o json --phase tuned --state-dir "$work/st" --compare baseline --html "$work/seed.html" \
	tuned*.json) >"$work/seed.json" 2>/dev/null || fail "seed tuned --compare --html"
refdoc=$(find "$work/st/reports/baseline" -name '*.json' | head -1)

# A hostile job name.
"$py" - "$fixtures/fio-3.33-randread-1job-jsonplus.json" "$work/evil-in.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["jobs"][0]["jobname"] = "<script>console.error(1)</script><img src=http://127.0.0.1:9/x>&\"'"
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" report -o json --html "$work/evil.html" "$work/evil-in.json" >"$work/evil.json" 2>/dev/null ||
	fail "report --html on a hostile job name"

# The fleet view: six hosts from the stub service (one an outlier, one named with markup).
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$py" "$stubpy" "$port" "$work/stub.log" &
stub_pid=$!
for _ in $(seq 1 100); do "$py" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' \
	"$port" 2>/dev/null && break; sleep 0.1; done
"$bin" report -o json --query "http://127.0.0.1:$port/outlier/api/v1/export" --phase tuned --compare baseline \
	--html "$work/fleet.html" >"$work/fleet.json" 2>"$work/fleet.err" || fail "report --query --html: $(cat "$work/fleet.err")"
kill "$stub_pid" 2>/dev/null
wait "$stub_pid" 2>/dev/null
stub_pid=

for name in fixtures seed evil fleet; do
	browse "$name" "$work/$name.html"
	checks=$((checks + 1))
	args=("$work/$name.dom.html" "$work/$name.json")
	[ "$name" = seed ] && args+=("$refdoc")
	if "$py" "$check" "${args[@]}" >"$work/check.out" 2>&1; then
		pass "$name: the DOM Chromium built: $(tail -1 "$work/check.out" | sed 's/^ok *[^ ]*: //')"
	else
		fail "$name: the DOM Chromium built:"; head -10 "$work/check.out"
	fi
	quiet "$name"
	checks=$((checks + 1))
	if [ -s "$out/$name.png" ]; then pass "$name: screenshot $out/$name.png"; else fail "$name: no screenshot"; fi
done
checks=$((checks + 1))
if grep -qF '&lt;script&gt;console.error(1)&lt;/script&gt;&lt;img src=http://127.0.0.1:9/x&gt;&amp;"'"'" "$work/evil.dom.html"; then
	pass "evil: the job name is text in the DOM"
else
	fail "evil: the job name is not text in the DOM"
fi

# The checks fail on a page that logs and loads (its CSP removed).
sed 's|<meta http-equiv="Content-Security-Policy"[^>]*>||; s|</body>|<img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body>|' \
	"$work/fixtures.html" >"$work/broken.html"
browse broken "$work/broken.html"
before=$fails
quiet broken >"$work/broken.out"
checks=$((checks + 1))
if [ $((fails - before)) -eq 2 ]; then
	fails=$before
	pass "broken copy: its console message and its request are caught"
else
	fails=$before
	fail "broken copy: not caught:"; cat "$work/broken.out"
fi
rm -f "$out/broken.png"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
