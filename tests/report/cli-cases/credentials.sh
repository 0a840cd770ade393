# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case credentials of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): a service URL that carries credentials (user information,
# InfluxDB's p=) is refused (--upload, --query: 64; url= of the settings file:
# 1, as every settings-file error) before anything is written or sent, and the
# password is in no output: stderr, stdout (-o json), the --html file, the
# state directory (saved sets, the spool). An '@' in the path or the query is
# not user information. No server: nothing may be sent.
settings_files
pw=s3cretPW
html=$work/report.html
hint='credentials come only from an auth file \(--auth-file FILE, or auth_file= in \[upload\] of the settings file\)$'
# leaks NAME: the password is in none of the outputs of the last run, no --html file was written.
leaks() {
	checks=$((checks + 1))
	local where
	where=$(grep -rl -- "$pw" "$work/out" "$work/err" "$us" "$html" 2>/dev/null)
	if [ -n "$where" ]; then
		fail "$1: the password is in $where"
	elif [ -e "$html" ]; then
		fail "$1: --html file written"
	else
		pass "$1: the password in no output, no --html file"
	fi
	rm -f "$html"
}
# refused NAME RC REGEX -- ARGS: expect's checks (exit code, the one line), then leaks.
refused() {
	expect "$@"
	leaks "$1"
}
up="--upload http://\*\*\*@127\.0\.0\.1:1/write: a URL with user information \(user@ or user:password@\) is refused: $hint"
refused "upload: user:password@" 64 "^scsitune: $up" \
	-- -o json report --phase x --state-dir "$us" --html "$html" --upload "http://user:$pw@127.0.0.1:1/write" "$good"
refused "upload: user@ alone" 64 "^scsitune: --upload http://\*\*\*@127\.0\.0\.1:1/write: a URL with user information" \
	-- report --phase x --state-dir "$us" --upload "http://$pw@127.0.0.1:1/write" "$good"
refused "upload: '@' percent-encoded in the user and the password" 64 \
	"^scsitune: --upload https://\*\*\*@127\.0\.0\.1:1/write: a URL with user information" \
	-- report --phase x --state-dir "$us" --upload "https://us%40er:$pw%40x@127.0.0.1:1/write" "$good"
refused "upload: three slashes (curl still reads a user)" 64 \
	"^scsitune: --upload http:///\*\*\*@127\.0\.0\.1:1/write: a URL with user information" \
	-- report --phase x --state-dir "$us" --upload "http:///user:$pw@127.0.0.1:1/write" "$good"
refused "upload: InfluxDB's p=" 64 \
	"^scsitune: --upload http://127\.0\.0\.1:1/write\?db=s&u=me&p=\*\*\*: a URL with a password parameter \(p=\) is refused: $hint" \
	-- report --phase x --state-dir "$us" --upload "http://127.0.0.1:1/write?db=s&u=me&p=$pw" "$good"
refused "upload: not http and a password (the password is never shown)" 64 "^scsitune: --upload ftp://\*\*\*@h/: " \
	-- report --phase x --state-dir "$us" --upload "ftp://user:$pw@h/" "$good"
refused "query: user:password@" 64 \
	"^scsitune: --query http://\*\*\*@127\.0\.0\.1:1: a URL with user information \(user@ or user:password@\) is refused: $hint" \
	-- -o json report --query "http://user:$pw@127.0.0.1:1" --phase x --html "$html"
refused "query: p=" 64 "^scsitune: --query http://127\.0\.0\.1:1/query\?db=s&p=\*\*\*: a URL with a password parameter" \
	-- report --query "http://127.0.0.1:1/query?db=s&p=$pw" --phase x
state_empty "URLs with credentials" "$us"
# --flush: the spool is left as it is (a batch that is there stays, nothing is sent).
mkdir -p "$us/spool"
printf 'scsitune_fio,host=h iops=1 1\n' >"$work/batch.lp"
cp "$work/batch.lp" "$us/spool/0123456789abcdef.lp"
refused "flush: user:password@" 64 "^scsitune: --upload http://\*\*\*@127\.0\.0\.1:1/write: a URL with user information" \
	-- report --flush --state-dir "$us" --upload "http://user:$pw@127.0.0.1:1/write"
checks=$((checks + 1))
if [ "$(find "$us" -type f)" = "$us/spool/0123456789abcdef.lp" ] && cmp -s "$work/batch.lp" "$us/spool/0123456789abcdef.lp"; then
	pass "flush: the spool untouched"
else
	fail "flush: the spool changed: $(find "$us" -type f)"
fi
rm -r "$us"
# The settings file: url= with credentials is a bad settings file (1), named with its line and key.
printf '[upload]\nauth_file = /nonexistent\nurl = http://user:%s@127.0.0.1:1/write\n' "$pw" >"$work/creds.conf"
conf="^scsitune: $work/creds\.conf:3: upload\.url http://\*\*\*@127\.0\.0\.1:1/write: a URL with user information \(user@ or user:password@\) is refused: $hint"
refused "settings file: url= with user:password@ (--config)" 1 "$conf" \
	-- -o json report --phase x --state-dir "$us" --html "$html" --config "$work/creds.conf" "$good"
SCSITUNE_CONFIG=$work/creds.conf refused "settings file: url= with user:password@ (\$SCSITUNE_CONFIG, --flush)" 1 "$conf" \
	-- report --flush --state-dir "$us"
SCSITUNE_CONFIG=$work/creds.conf refused "settings file: url= with user:password@ (read for --query too)" 1 "$conf" \
	-- report --query http://127.0.0.1:1 --phase x --html "$html"
state_empty "settings file with credentials" "$us"
# Not user information: an '@' in the path or the query, a %40 in the path (the URL is taken: the spool is empty).
for url in 'http://127.0.0.1:1/a@b/write' 'http://127.0.0.1:1/write?db=a@b' 'http://127.0.0.1:1/a%40b/write' \
	'http://127.0.0.1:1/write?db=s&u=reader'; do
	rc=0
	"$bin" report --flush --state-dir "$us" --upload "$url" >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -eq 0 ] && grep -q '^scsitune: spool is empty: nothing to upload$' "$work/err"; then
		pass "not credentials: $url"
	else
		fail "not credentials: $url: exit $rc: $(cat "$work/err")"
	fi
done
