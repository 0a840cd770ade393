#!/bin/sh
# Scenario "fleet-host", guest side: the guest as one host of a fleet, for
# tests/fleet/test-vm-host.sh (run.sh --serve gives it a NIC on QEMU's user
# network, its port 22 forwarded from a loopback port of the host). vm-stage
# runs it at every boot, as fleet-host.stage.sh BOOT OUT.
#
# boot 1  the host is provisioned as an operator's configuration management
#         would: scsitune in /usr/local/sbin (lib.sh install_scsitune), the
#         fleet's key in /etc/scsitune/trusted-keys (the payload bundle's
#         signer, /vm/in/files/fleet.pub), root's authorized key (the
#         driver's ephemeral one, /vm/in/files/id.pub); vm-handover enabled
#         (a reboot from outside hands run.sh the next boot's kernel)
# every   networkd and sshd started; OUT/serving gets "BOOT DATA_DISK"
# boot    (DATA_DISK: the /dev/disk/by-id name of the 64 MiB data disk, for
#         report --run's --device), then wait until the host side writes
#         /vm/in/stop (at most 60 min); exit 0 powers the guest off. A reboot
#         from outside (Ansible's reboot task) stops this stage with the
#         rest of the system; the next boot runs it again.
. "$VM_IN/lib.sh"
F=$VM_IN/files
up start
set -e
if [ "$VM_BOOT" = 1 ]; then
	install_scsitune
	install -D -m 0644 "$F/fleet.pub" /etc/scsitune/trusted-keys/fleet.pub
	install -d -m 0700 /root/.ssh
	install -m 0600 "$F/id.pub" /root/.ssh/authorized_keys
	systemctl enable vm-handover.service
fi
systemctl start vm-handover.service systemd-networkd.service ssh.service
wait_disks 2
data=
for l in /dev/disk/by-id/scsi-*vmdata0; do
	[ -b "$l" ] && data=$l
done
[ -n "$data" ] || { echo "no /dev/disk/by-id link for the data disk (serial vmdata0)"; ls -l /dev/disk/by-id; exit 1; }
up serving
echo "$VM_BOOT $data" >"$VM_OUT/serving"
# the host side's signal, looked for every second (a stat over 9p)
WAIT_EVERY=1 wait_until 3600 "the host side's /vm/in/stop" test -e "$VM_IN/stop" ||
	{ echo "the host side never wrote /vm/in/stop"; exit 1; }
up stop
