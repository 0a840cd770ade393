#!/bin/sh
# Scenario "metrics-unit", guest side: the package's scsitune-metrics.service
# and .timer (debian/scsitune.scsitune-metrics.*, passed in by
# SCSITUNE_VM_FILES) under the image's real systemd 252. One boot:
#
#   - the units go to /lib/systemd/system as the package puts them, ExecStart's
#     /usr/sbin/scsitune made /usr/local/sbin/scsitune (install_scsitune's
#     place; the only change);
#   - apply --profile vm-persist (the journal in /var/lib/scsitune: verify
#     reads it and takes its lock shared);
#   - a probe unit: the service's file with every line as shipped but
#     ExecStart (probe.sh: detect -o json, verify -o json, payload verify,
#     profile active, each's output, stderr and exit status, then writes to
#     /var/lib/scsitune, /etc and /tmp and the capabilities it has), run
#     under the same sandbox, and probe.sh run outside it (plain/);
#   - without /var/lib/prometheus/node-exporter: the service is skipped
#     (nodir.txt); with it: run (run.txt; when this scsitune has the metrics
#     command, its scsitune.prom and the directory's listing);
#   - the timer: disabled as installed, then enable --now (timer.txt);
#     systemd-analyze security of the service (security.txt).
# metrics-unit.check.py asserts on all of it.
. "$VM_IN/lib.sh"
R=$VM_OUT
DIR=/var/lib/prometheus/node-exporter
up start
install_scsitune || exit 1
for u in service timer; do
	sed 's|^ExecStart=/usr/sbin/scsitune |ExecStart=/usr/local/sbin/scsitune |' \
		"$VM_IN/files/scsitune.scsitune-metrics.$u" >/lib/systemd/system/scsitune-metrics.$u
done
cat >/usr/local/sbin/probe.sh <<'EOF'
#!/bin/sh
# probe.sh OUT: what scsitune reads, run where it is run; exit statuses in OUT/rc.txt
o=$1 s=/usr/local/sbin/scsitune
mkdir -p "$o"
$s detect -o json >"$o/detect.json" 2>"$o/detect.err"; echo "detect $?" >"$o/rc.tmp"
$s verify -o json >"$o/verify.json" 2>"$o/verify.err"; echo "verify $?" >>"$o/rc.tmp"
$s payload verify >"$o/payload.txt" 2>"$o/payload.err"; echo "payload $?" >>"$o/rc.tmp"
$s profile active >"$o/profile.txt" 2>"$o/profile.err"; echo "profile $?" >>"$o/rc.tmp"
touch /var/lib/scsitune/probe 2>"$o/write-state.err"; echo "write-state $?" >>"$o/rc.tmp"
touch /etc/probe 2>"$o/write-etc.err"; echo "write-etc $?" >>"$o/rc.tmp"
touch /tmp/probe 2>"$o/write-tmp.err"; echo "write-tmp $?" >>"$o/rc.tmp"
rm -f /var/lib/scsitune/probe /etc/probe /tmp/probe
while read -r k v; do [ "$k" = CapEff: ] && echo "capeff $v" >>"$o/rc.tmp"; done </proc/self/status
mv "$o/rc.tmp" "$o/rc.txt"
EOF
chmod 755 /usr/local/sbin/probe.sh
sed "s|^ExecStart=.*|ExecStart=/usr/local/sbin/probe.sh $DIR/probe|; s|^ConditionPathIsDirectory=.*||" \
	/lib/systemd/system/scsitune-metrics.service >/etc/systemd/system/scsitune-metrics-probe.service
scsitune apply --profile vm-persist >"$R/apply.txt" 2>&1
echo $? >"$R/apply.rc"
systemctl daemon-reload
props=-pResult\ -pExecMainStatus\ -pConditionResult\ -pActiveState
# 1. No textfile directory (node_exporter not installed): skipped.
rm -rf /var/lib/prometheus
systemctl start scsitune-metrics.service
# shellcheck disable=SC2086
systemctl show $props scsitune-metrics.service >"$R/nodir.txt"
# 2. The directory: the probe in the sandbox and outside it, then the service.
mkdir -p $DIR
systemctl start scsitune-metrics-probe.service
# shellcheck disable=SC2086
systemctl show $props scsitune-metrics-probe.service >"$R/probe-unit.txt"
cp -r $DIR/probe "$R/sandboxed"
rm -rf $DIR/probe
/usr/local/sbin/probe.sh "$R/plain"
if scsitune metrics --help >/dev/null 2>&1; then
	echo yes >"$R/has-metrics"
	systemctl start scsitune-metrics.service
	# shellcheck disable=SC2086
	systemctl show $props scsitune-metrics.service >"$R/run.txt"
	ls -la $DIR >"$R/dir.ls"
	cp $DIR/scsitune.prom "$R/" 2>/dev/null
fi
journalctl -u scsitune-metrics.service -u scsitune-metrics-probe.service --no-pager >"$R/journal.txt" 2>&1
# 3. The timer: as installed, then enabled.
{
	echo "installed $(systemctl is-enabled scsitune-metrics.timer) $(systemctl is-active scsitune-metrics.timer)"
	systemctl enable --now scsitune-metrics.timer 2>&1
	echo "enabled $(systemctl is-enabled scsitune-metrics.timer) $(systemctl is-active scsitune-metrics.timer)"
	systemctl show -pTriggers -pTimersMonotonic -pRandomizedDelayUSec scsitune-metrics.timer
} >"$R/timer.txt"
systemd-analyze security scsitune-metrics.service >"$R/security.txt" 2>&1
up end
