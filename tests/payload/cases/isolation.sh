# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/isolation (sourced by test-payload.sh).
# --- 8. isolation: under --sysroot nothing of this machine is read ----------------------
# strace -f: every path outside the work directory, other than the loader's
# cache and shared libraries (and the binaries run), is a failure. libkmod
# runs in a child chrooted into the tree, and so does depmod (payload/sandbox.c:
# a child unshares a mount namespace, binds the host's /usr and the tree's
# directories, opened inside the tree through /proc/self/fd, onto a tmpfs over
# the tree, and chroots there): a chrooted child's absolute paths are the
# tree's (its chroot() must name the tree), and depmod run by a child that is
# not chrooted is a failure.
if command -v strace >/dev/null; then
	isolated() { # LABEL WANT CMD...
		local label=$1 want=$2 rc=0
		shift 2
		strace -f -qq -s 4096 -e trace=%file,chroot,unshare -o "$work/strace" "$@" >/dev/null 2>"$work/err" || rc=$?
		[ "$rc" -eq "$want" ] || { fail "isolation $label: exit $rc, want $want: $(head -2 "$work/err")"; return; }
		# execve() lines are the binaries run (with execvp's tries along PATH), not reads.
		# The directories above the work directory are looked at when --sysroot is
		# resolved; /usr/lib is listed for the loader's entries of depmod's root. A child
		# that unshared its mount namespace may, before its chroot, bind /usr and the
		# tree's directories (/proc/self/fd/N), make links in its tmpfs (their text
		# is not read) and write its user namespace's maps.
		awk -v root="$root" -v work="$work" '
			BEGIN { a = work; while (sub(/\/[^\/]*$/, "", a) && a != "") up[a] = 1 }
			$2 ~ /^chroot\(/ { if (index($2, "chroot(\"" root "\")") != 1 || $NF != "0") print "chroot elsewhere: " $0; chrooted[$1] = 1; next }
			chrooted[$1] { next }
			$2 ~ /^unshare\(/ { if ($NF == "0") unshared[$1] = 1; next }
			$2 ~ /^execve\(/ { if ($2 ~ /\/depmod"/ && $NF == "0") print "depmod run outside its root: " $0; next }
			unshared[$1] && $0 ~ /^[0-9]+ +mount\("(\/usr|\/proc\/self\/fd\/[0-9]+)", / { next }
			unshared[$1] && $0 ~ /^[0-9]+ +symlink\("[^"]*", "[^\/"][^"]*"\)/ { next }
			unshared[$1] && $0 ~ /^[0-9]+ +openat\(AT_FDCWD, "\/proc\/self\/(setgroups|uid_map|gid_map)", O_WRONLY/ { next }
			{ while (match($0, /"\/[^"]*"/)) { p = substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, RSTART + RLENGTH)
				if (!(p in up) && p != "/usr/lib") print p } }' "$work/strace" |
			grep -v "^$work" | grep -Ev '^/etc/ld\.so\.(cache|preload)$|^/(usr/)?lib/x86_64-linux-gnu/|^/lib64/|^/(usr/)?s?bin/|^/(usr/)?lib/(locale|systemd)|^/dev/null$|^/$' |
			sort -u >"$work/escaped"
		if [ -s "$work/escaped" ]; then
			fail "isolation $label: paths of this machine touched: $(head -5 "$work/escaped" | tr '\n' ' ')"
		else
			grep -q 'chroot(' "$work/strace" && ok "isolation $label (libkmod and depmod chrooted into the tree)" || ok "isolation $label"
		fi
	}
	work=$(realpath "$work")
	root=$work/root
	isolated "install --dry-run" 0 "$bin" --sysroot "$root" payload install "$b" --dry-run --state-dir "$state"
	isolated "install" 0 "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"
	isolated "verify FILE" 2 "$bin" --sysroot "$root" payload verify "$b"
	isolated "verify" 2 "$bin" --sysroot "$root" payload verify
	isolated "detect" 0 "$bin" --sysroot "$root" detect -o json
	isolated "remove" 0 "$bin" --sysroot "$root" payload remove --state-dir "$state"
else
	fail "strace is not installed (scripts/install-deps --test)"
fi
