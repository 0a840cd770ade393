# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case upload of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): bad upload settings (URL, auth file, CA file, --config file)
# refused before anything is saved.
settings_files
# A bad --upload URL is a usage error, like any bad value on the command line (64).
expect "upload: not http" 64 "^scsitune: --upload ftp://h/w: not an http:// or https:// URL$" \
	-- report --phase x --state-dir "$us" --upload ftp://h/w "$good"
expect "upload: precision in the URL" 64 "^scsitune: --upload http://127.0.0.1:1/write\?precision=ns: sets precision= itself" \
	-- report --phase x --state-dir "$us" --upload 'http://127.0.0.1:1/write?precision=ns' "$good"
expect "upload: missing auth file" 1 "^scsitune: --auth-file $work/none.auth: No such file or directory$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --auth-file "$work/none.auth" "$good"
expect "upload: auth file of no known form" 1 "^scsitune: --auth-file $work/form.auth: first line is not 'Bearer TOKEN', 'Token TOKEN' or 'user:password'$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --auth-file "$work/form.auth" "$good"
expect "upload: missing CA file" 1 "^scsitune: --ca-file $work/none.pem: No such file or directory$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --ca-file "$work/none.pem" "$good"
expect "config: missing --config file" 1 "^scsitune: $work/none.conf: No such file or directory$" \
	-- report --phase x --state-dir "$us" --config "$work/none.conf" "$good"
expect "config: unknown section" 1 "^scsitune: $work/bad.conf:4: unknown key 'server.url'$" \
	-- report --phase x --state-dir "$us" --config "$work/bad.conf" "$good"
state_empty "bad upload settings" "$us"
