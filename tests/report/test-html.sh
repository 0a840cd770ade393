#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report --html FILE, through the binary (no golden; check-html.py's structural checks):
#  - the committed fio outputs, and SPEC.md's seed table with --compare: the HTML is
#    well-formed and self-contained, and its numbers equal those of -o json printed
#    by the same invocation (and the reference's saved document);
#  - runs of different fio jobs: the not-comparable reasons in a warning box;
#  - the checker itself fails on a changed number, an added <script>, an unclosed tag,
#    a lost warning;
#  - hostile strings (fio job name, file name, host name of a --sysroot tree with
#    <, &, quotes, a control byte) render as text, not markup;
#  - bad paths: one error line naming the file, exit 1, nothing on stdout, no HTML
#    and no temporary file left, nothing saved; an old HTML file is left as it was;
#    usage errors (exit 64) for --html with --flush, an empty name. (--query --html:
#    tests/fleet/test-query.sh, against real servers.)
# Usage: test-html.sh SCSITUNE FIO_FIXTURES CHECK_HTML_PY FIXTURES_DIR
set -uo pipefail
bin=$(realpath "$1") fixtures=$(realpath "$2") check=$(realpath "$3") sysfx=$(realpath "$4")
py=${PYTHON3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-html.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }
ok() { # NAME CMD...: the command succeeds
	local name=$1
	shift
	checks=$((checks + 1))
	if "$@" >"$work/ok.out" 2>&1; then pass "$name"; else fail "$name:"; head -20 "$work/ok.out"; fi
}
not_ok() { # NAME CMD...: the command fails (the checker catches a broken copy)
	local name=$1
	shift
	checks=$((checks + 1))
	if "$@" >"$work/ok.out" 2>&1; then fail "$name: not caught"; else pass "$name"; fi
}

# expect NAME RC STDERR_REGEX -- ARGS...: exit code, one stderr line matching, nothing on stdout.
expect() {
	local name=$1 want_rc=$2 err_re=$3
	shift 4
	local rc=0
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	local why=""
	[ "$rc" -eq "$want_rc" ] || why="exit $rc, want $want_rc"
	[ -z "$why" ] && ! grep -Eq -- "$err_re" "$work/err" && why="stderr does not match /$err_re/"
	[ -z "$why" ] && [ -s "$work/out" ] && why="stdout not empty"
	[ -z "$why" ] && [ "$want_rc" -eq 1 ] && [ "$(grep -vEc '^scsitune: (warning|hint): ' "$work/err")" -ne 1 ] && why="not one error line"
	if [ -n "$why" ]; then
		fail "$name: $why"; sed 's/^/  stderr: /' "$work/err" | head -5
	else
		pass "$name"
	fi
}
nothing_in() { # NAME DIR: no file under DIR
	checks=$((checks + 1))
	if [ -z "$(find "$2" -type f 2>/dev/null)" ]; then pass "$1: nothing left"; else fail "$1: files left: $(find "$2" -type f)"; fi
}

cd "$fixtures" || exit 1
# Four different jobs (numjobs, job mix) and fio versions: a set only with --allow-mixed.
set4=(--allow-mixed fio-3.33-randread-2jobs-json.json fio-3.33-randread-2jobs-jsonplus.json
	fio-3.33-randread-1job-jsonplus.json fio-3.33-global-mixed-json.json)
# Three fio versions: a set only with --allow-mixed.
old=(--allow-mixed fio-2.1.4-5groups-json.json fio-2.17-randread-randwrite-2groups-json.json fio-3.1-randread-1job-json.json)

# --- The committed outputs: -o json and --html from one invocation.
"$bin" report -o json --phase fixtures --state-dir "$work/st" --html "$work/fixtures.html" "${set4[@]}" \
	>"$work/fixtures.json" 2>"$work/err" || fail "report --html on the fixtures: $(cat "$work/err")"
ok "fixtures: numbers equal -o json" "$py" "$check" "$work/fixtures.html" "$work/fixtures.json"
checks=$((checks + 1))
if grep -q "HTML report written to $work/fixtures.html" "$work/err"; then pass "fixtures: the file is named on stderr"; else fail "fixtures: stderr: $(cat "$work/err")"; fi
# fio 2.x and 3.1 outputs (group 0 of each: 2.1.4's writes; other fio versions, not comparable):
# the write latency chart and the warning box too.
"$bin" report -o json --group 0 --html "$work/old.html" "${old[@]}" >"$work/old.json" 2>/dev/null ||
	fail "report --group 0 --html on old fio outputs"
ok "old fio outputs: numbers equal -o json" "$py" "$check" "$work/old.html" "$work/old.json"
checks=$((checks + 1))
if grep -q 'aria-label="write completion latency' "$work/old.html"; then pass "old fio outputs: write latency chart"; else fail "old fio outputs: no write latency chart"; fi
# The text output is the same with and without --html.
"$bin" report "${set4[@]}" >"$work/plain.txt" 2>/dev/null
"$bin" report --html "$work/again.html" "${set4[@]}" >"$work/with.txt" 2>/dev/null
checks=$((checks + 1))
if cmp -s "$work/plain.txt" "$work/with.txt"; then pass "text output unchanged by --html"; else fail "text output changed by --html"; fi

# Runs of different jobs: the warning box, each reason as text (check-html.py), and the checker catches its loss.
"$bin" report -o json --allow-mixed --html "$work/mixed.html" fio-3.33-randread-2jobs-json.json fio-3.33-global-mixed-json.json \
	>"$work/mixed.json" 2>/dev/null || fail "report --html on runs of different jobs"
ok "runs not comparable: said in the HTML" "$py" "$check" "$work/mixed.html" "$work/mixed.json"
checks=$((checks + 1))
if grep -q 'id="runs-not-comparable"' "$work/mixed.html"; then pass "runs not comparable: the warning box"; else fail "runs not comparable: no warning box"; fi
sed 's|<div class="warnbox"[^>]*>.*||' "$work/mixed.html" >"$work/bad0.html"
not_ok "checker: a missing not-comparable warning" "$py" "$check" "$work/bad0.html" "$work/mixed.json"

# --- The checker fails on broken copies.
sed '0,/data-k="summary.avg_kiops" data-v="[^"]*"/s//data-k="summary.avg_kiops" data-v="1.5"/' \
	"$work/fixtures.html" >"$work/bad1.html"
not_ok "checker: a changed data-v" "$py" "$check" "$work/bad1.html" "$work/fixtures.json"
sed '0,/\(<td class="n" data-k="runs.0.kiops" data-v="[^"]*">\)[0-9.,]*</s//\19.9</' "$work/fixtures.html" >"$work/bad2.html"
not_ok "checker: a changed shown number" "$py" "$check" "$work/bad2.html" "$work/fixtures.json"
sed 's|</body>|<script>fetch("x")</script></body>|' "$work/fixtures.html" >"$work/bad3.html"
not_ok "checker: a <script>" "$py" "$check" "$work/bad3.html" "$work/fixtures.json"
sed '0,/<\/table>/s///' "$work/fixtures.html" >"$work/bad4.html"
not_ok "checker: an unclosed <table>" "$py" "$check" "$work/bad4.html" "$work/fixtures.json"
sed '0,/data-k="runs.1.kiops"/s//data-k="runs.1.kiopz"/' "$work/fixtures.html" | grep -v 'data-k="runs.1.kiops"' \
	>"$work/bad5.html"
not_ok "checker: a run's KIOPS missing" "$py" "$check" "$work/bad5.html" "$work/fixtures.json"
sed '0,/\(<rect class="bar"[^>]*height="\)[0-9.]*/s//\1999/' "$work/fixtures.html" >"$work/bad6.html"
not_ok "checker: a bar of the wrong height" "$py" "$check" "$work/bad6.html" "$work/fixtures.json"

# --- SPEC.md's seed table: baseline saved, tuned compared with it.
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
(cd "$seed" && "$bin" report --phase baseline --state-dir "$work/sst" base*.json >/dev/null 2>&1) || fail "seed baseline"
(cd "$seed" && "$bin" report -o json --phase tuned --state-dir "$work/sst" --compare baseline --html "$work/seed.html" \
	tuned*.json) >"$work/seed.json" 2>/dev/null || fail "seed tuned --compare --html"
refdoc=$(find "$work/sst/reports/baseline" -name '*.json' | head -1)
ok "seed table: numbers equal -o json and the reference's saved document" \
	"$py" "$check" "$work/seed.html" "$work/seed.json" "$refdoc"
checks=$((checks + 1))
n_ref=$(grep -c '<rect class="bar ref"' "$work/seed.html") n_cur=$(grep -c '<rect class="bar"' "$work/seed.html")
if [ "$n_ref" -eq 10 ] && [ "$n_cur" -eq 5 ]; then pass "seed table: 10 baseline and 5 tuned bars side by side"; else fail "seed table: $n_ref baseline bars, $n_cur tuned"; fi
checks=$((checks + 1))
if grep -q 'data-k="compare.avg_change_pct" data-v="17.506">17.5<' "$work/seed.html" &&
	grep -q 'data-k="compare.spread_change_points" data-v="-28.223">-28.2<' "$work/seed.html"; then
	pass "seed table: avg +17.5 %, spread -28.2 points"
else
	fail "seed table: the change is not +17.5 % / -28.2 points"
fi

# --- Hostile strings render as text.
evil='<script>alert(1)</script>&amp;"'"'"'x'
ev=$work/evil
mkdir -p "$ev"
evfile="$ev/a<b>&\"c'.json"
"$py" - "$fixtures/fio-3.33-randread-1job-jsonplus.json" "$evfile" "$evil" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["jobs"][0]["jobname"] = sys.argv[3] + "\x1b[2J"
json.dump(d, open(sys.argv[2], "w"))
PY
"$bin" report -o json --html "$work/evil.html" "$evfile" >"$work/evil.json" 2>/dev/null || fail "report --html on a hostile job name"
ok "hostile job name: numbers equal -o json" "$py" "$check" "$work/evil.html" "$work/evil.json"
"$py" - "$work/evil.html" "$evil" "$evfile" <<'PY' || fail "hostile job name and file name"
import sys
from html.parser import HTMLParser
html, evil, evfile = sys.argv[1], sys.argv[2], sys.argv[3]
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.cells, self.cur = [], [], None
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        c = dict(attrs).get("class", "")
        if tag == "td" and c in ("jobname", "path"):
            self.cur = [c, ""]
            self.cells.append(self.cur)
    def handle_endtag(self, tag):
        if tag == "td":
            self.cur = None
    def handle_data(self, data):
        if self.cur is not None:
            self.cur[1] += data
p = P()
p.feed(open(html, encoding="utf-8").read())
assert "script" not in p.tags, "a <script> element"
names = [t for c, t in p.cells if c == "jobname"]
assert names == [evil + "\\x1b[2J"], f"job name shown as {names!r}"
paths = [t for c, t in p.cells if c == "path"]
assert evfile in paths, f"file name not shown as text: {paths!r}"
print("ok   hostile job name and file name: shown as text (the ESC as \\x1b), no element made")
PY
checks=$((checks + 1))
# A host name with markup, from a --sysroot tree (report --host-facts).
mkdir -p "$work/tree" && tar -xJf "$sysfx/no-hba.tar.xz" -C "$work/tree" || fail "extract no-hba"
printf '%s\n' '<b>evil&"host'"'"'</b>' >"$work/tree/proc/sys/kernel/hostname"
"$bin" --sysroot "$work/tree" report --host-facts -o json --state-dir "$work/hst" --html "$work/host.html" \
	fio-3.1-randread-1job-json.json >"$work/host.json" 2>"$work/err" || fail "report --host-facts --html: $(cat "$work/err")"
ok "hostile host name: numbers equal -o json" "$py" "$check" "$work/host.html" "$work/host.json"
"$py" - "$work/host.html" "$work/host.json" <<'PY' || fail "hostile host name"
import json, sys
from html.parser import HTMLParser
want = json.load(open(sys.argv[2]))["provenance"]["host"]
assert want == '<b>evil&"host\'</b>', want
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.rows, self.th, self.cell = [], {}, None, None
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "td" and self.th:
            self.cell = ""
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[self.th] = self.cell
            self.cell = None
        if tag == "tr":
            self.th = None
    def handle_data(self, data):
        if self.tags and self.tags[-1] == "th":
            self.th = data
        elif self.cell is not None:
            self.cell += data
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
assert "b" not in p.tags, "a <b> element made from the host name"
assert p.rows.get("host") == want, f"host shown as {p.rows.get('host')!r}"
print("ok   hostile host name: shown as text in the provenance")
PY
checks=$((checks + 1))

# --- Bad paths: one line naming the file, exit 1, nothing left.
expect "no such directory" 1 "^scsitune: --html $work/nodir/r.html: $work/nodir: No such file or directory$" -- \
	report --phase p --state-dir "$work/bad1" --html "$work/nodir/r.html" "${set4[@]}"
nothing_in "no such directory (state dir)" "$work/bad1"
mkdir -p "$work/isdir.html"
expect "a directory" 1 "^scsitune: --html $work/isdir.html: Is a directory$" -- \
	report --phase p --state-dir "$work/bad2" --html "$work/isdir.html" "${set4[@]}"
nothing_in "a directory (state dir)" "$work/bad2"
touch "$work/afile"
expect "directory is a file" 1 "^scsitune: --html $work/afile/r.html: $work/afile: Not a directory$" -- \
	report --html "$work/afile/r.html" "${set4[@]}"
# The temporary file cannot be made (its name is too long): after ingest, before anything is saved.
mkdir -p "$work/long"
long=$work/long/$(printf 'h%.0s' $(seq 1 250)).html
expect "temporary file fails" 1 "^scsitune: --html $long: File name too long$" -- \
	report --phase p --state-dir "$work/bad3" --html "$long" "${set4[@]}"
nothing_in "temporary file fails (state dir)" "$work/bad3"
nothing_in "temporary file fails (no HTML, no temporary file)" "$work/long"
# A bad fio file: the old HTML file is left as it was, no temporary file.
mkdir -p "$work/keep" && echo "old report" >"$work/keep/r.html"
echo "not json" >"$work/notfio.json"
expect "bad fio input" 1 "notfio.json" -- report --html "$work/keep/r.html" "${set4[0]}" "$work/notfio.json"
checks=$((checks + 1))
if [ "$(cat "$work/keep/r.html")" = "old report" ] && [ "$(ls -A "$work/keep")" = r.html ]; then
	pass "bad fio input: the old HTML file untouched, no temporary file"
else
	fail "bad fio input: $(ls -A "$work/keep")"
fi
# A good report replaces it.
"$bin" report --html "$work/keep/r.html" "${set4[@]}" >/dev/null 2>&1
checks=$((checks + 1))
if grep -q '^<!DOCTYPE html>' "$work/keep/r.html" && [ "$(ls -A "$work/keep")" = r.html ]; then pass "replaced by the new report"; else fail "not replaced: $(ls -A "$work/keep")"; fi
expect "--html with --flush" 64 "--html does not go with report --flush" -- report --flush --upload http://127.0.0.1:9/write \
	--state-dir "$work/bad4" --html "$work/f.html"
expect "--html empty" 64 "--html: empty" -- report --html "" "${set4[@]}"
nothing_in "usage errors" "$work/bad4"
checks=$((checks + 1))
if [ ! -e "$work/f.html" ]; then pass "usage errors: no HTML file"; else fail "usage errors: an HTML file written"; fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
