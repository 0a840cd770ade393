#!/usr/bin/env python3
"""Scenario "payload", host side: asserts on what payload.guest.sh wrote.

- every rmmod/insmod/configfs step exited 0: Debian's scsi_mod and
  target_core_mod were replaced by the payload's, and the stock modules
  (virtio_scsi, megaraid_sas, sd_mod, scsi_debug, configfs, tcm_loop) loaded
  on top of them (the CRC promise); dmesg has no "disagrees about version";
- the loaded modules carry the manifest's version marker, taint O and E
  (out of tree, unsigned); stock iocounterbits was 32, now every disk says 64;
- patch A: the virtio-scsi HBA behind the node-1 expander (numa_node 1) and
  megasas (numa_node -1) scanned their disks with the patched scsi_mod;
- patch C: under fio on scsi_debug and on virtio-scsi, iorequest_cnt and
  iodone_cnt grew by exactly the requests the block layer completed
  (reads + writes + discards + flushes in /sys/block/X/stat), equal to each
  other, and did not move in the 2 s after;
- patches D/E: through tcm_loop on a nullio ramdisk, fio wrote and then read
  4352 MiB (past 4 GiB); scsi_lu write_mbytes/read_mbytes grew by exactly
  4352, num_cmds by exactly the commands the block layer completed (the same
  number iorequest_cnt saw), nothing moved after.

Usage: payload.check.py RESULTS_DIR SCSITUNE
"""
import json
import os
import re
import sys

R = sys.argv[1]
fails = []


def check(cond, msg):
    if not cond:
        fails.append(msg)
    return cond


def read(name):
    with open(os.path.join(R, name)) as f:
        return f.read()


def kv(name):
    out = {}
    for line in read(name).splitlines():
        k, _, v = line.partition(' ')
        out[k] = v.strip()
    return out


def blk_cmds(stat):
    f = [int(x) for x in stat.split()]
    # reads, writes, discards, flushes completed (6.1: 17 fields)
    return f[0] + f[4] + (f[11] if len(f) > 11 else 0) + (f[15] if len(f) > 15 else 0)


manifest = json.loads(read('manifest.json'))
marker = {m['module']: m['version'] for m in manifest['modules']}

# --- the swap and the stock modules on top -----------------------------------
steps = dict(line.split() for line in read('steps.txt').splitlines())
for want in ('rmmod_scsi_mod', 'insmod_payload_scsi_mod', 'insmod_virtio_scsi', 'insmod_megaraid_sas',
             'insmod_sd_mod', 'insmod_scsi_debug', 'insmod_configfs', 'insmod_payload_target_core_mod',
             'insmod_tcm_loop', 'lio_control', 'lio_enable', 'lio_nexus', 'lio_link'):
    check(steps.get(want) == '0', 'step %s: exit %s (steps.log has its output)' % (want, steps.get(want, 'never ran')))
for n, rc in steps.items():
    check(rc == '0', 'step %s exited %s' % (n, rc))
dmesg = read('dmesg.txt')
check('disagrees about version' not in dmesg, 'dmesg: a module disagrees about a symbol version (CRC mismatch)')
check('Unknown symbol' not in dmesg, 'dmesg: unknown symbol while loading a module')
for bad in ('BUG:', 'WARNING:', 'Oops', 'general protection'):
    check(bad not in dmesg, 'dmesg has %r' % bad)

mi = kv('modinfo.txt')
for m in ('scsi_mod', 'target_core_mod'):
    check(mi.get(m + '.version') == marker[m],
          '%s: /sys/module version %r, manifest says %r' % (m, mi.get(m + '.version'), marker[m]))
    check(mi.get(m + '.taint') == 'OE', '%s: taint %r, expected OE (out of tree, unsigned)' % (m, mi.get(m + '.taint')))

stock = kv('stock.txt')
check(stock.get('stock_iocounterbits') == '32', 'stock scsi_mod iocounterbits %r, expected 32' % stock.get('stock_iocounterbits'))
check('stock_version' not in stock, 'the stock scsi_mod already had a version: %r' % stock.get('stock_version'))

# --- patch A: the HBAs scanned their disks ------------------------------------
disks = {}
for line in read('disks.txt').splitlines():
    f = line.split()
    if not check(len(f) == 5, 'disks.txt: bad line %r' % line):
        continue
    name, proc, pci, node, bits = f
    disks[proc] = (name, pci, node)
    check(bits == '64', '%s (%s): iocounterbits %s, expected 64' % (name, proc, bits))
check(disks.get('virtio_scsi', (0, 0, 0))[1:] == ('0000:21:02.0', '1'),
      'virtio-scsi behind the node-1 expander: %r' % (disks.get('virtio_scsi'),))
check(disks.get('megaraid_sas', (0, 0, 0))[1:] == ('0000:00:03.0', '-1'), 'megasas: %r' % (disks.get('megaraid_sas'),))
check('scsi_debug' in disks, 'no scsi_debug disk after the swap')

# --- patch C: counters vs the block layer --------------------------------------
for name in ('scsi_debug', 'virtio'):
    if not check(os.path.exists(os.path.join(R, 'io-%s.txt' % name)), 'io-%s.txt missing' % name):
        continue
    io = kv('io-%s.txt' % name)
    check(read('fio-%s.rc' % name).strip() == '0', 'fio on %s exited %s' % (name, read('fio-%s.rc' % name).strip()))
    fio = json.loads(read('fio-%s.json' % name))
    ios = sum(j['read']['total_ios'] + j['write']['total_ios'] for j in fio['jobs'])
    check(ios > 1000, 'fio on %s: only %d I/Os' % (name, ios))
    cnt = {t: (int(io[t + '_iorequest_cnt'], 16), int(io[t + '_iodone_cnt'], 16), blk_cmds(io[t + '_stat']))
           for t in ('before', 'after', 'later')}
    req = cnt['after'][0] - cnt['before'][0]
    done = cnt['after'][1] - cnt['before'][1]
    blk = cnt['after'][2] - cnt['before'][2]
    check(req == blk and done == blk,
          '%s: iorequest_cnt +%d, iodone_cnt +%d, block layer completed +%d requests' % (name, req, done, blk))
    check(blk >= ios, '%s: block layer saw %d requests for fio\'s %d I/Os' % (name, blk, ios))
    check(cnt['later'] == cnt['after'], '%s: counters moved after the run: %r -> %r' % (name, cnt['after'], cnt['later']))
    print('payload.check: %s: fio %d I/Os, block layer +%d requests, iorequest_cnt +%d, iodone_cnt +%d'
          % (name, ios, blk, req, done))

# --- patches D/E: LIO statistics past 4 GiB -------------------------------------
MIB = 4352  # 4.25 GiB per direction
if check(os.path.exists(os.path.join(R, 'lio.txt')), 'lio.txt missing: no tcm_loop disk'):
    lio = kv('lio.txt')
    for rw in ('write', 'read'):
        rc = read('fio-lio-%s.rc' % rw).strip()
        check(rc == '0', 'fio %s through LIO exited %s: %s' % (rw, rc, read('fio-lio-%s.err' % rw)[-300:]))
        fio = json.loads(read('fio-lio-%s.json' % rw))
        moved = sum(j[rw]['io_bytes'] for j in fio['jobs'])
        check(moved == MIB << 20, 'fio %s moved %d bytes, expected %d' % (rw, moved, MIB << 20))

    def g(tag, k):
        return int(lio['%s_%s' % (tag, k)])
    check(g('after_write', 'write_mbytes') - g('before', 'write_mbytes') == MIB,
          'write_mbytes %d -> %d, expected +%d' % (g('before', 'write_mbytes'), g('after_write', 'write_mbytes'), MIB))
    check(g('after_write', 'read_mbytes') == g('before', 'read_mbytes'), 'read_mbytes moved during the write')
    check(g('after_read', 'read_mbytes') - g('after_write', 'read_mbytes') == MIB,
          'read_mbytes %d -> %d, expected +%d' % (g('after_write', 'read_mbytes'), g('after_read', 'read_mbytes'), MIB))
    check(g('after_read', 'write_mbytes') == g('after_write', 'write_mbytes'), 'write_mbytes moved during the read')
    prev = 'before'
    for tag in ('after_write', 'after_read'):
        ncmd = g(tag, 'num_cmds') - g(prev, 'num_cmds')
        blk = blk_cmds(lio[tag + '_stat']) - blk_cmds(lio[prev + '_stat'])
        req = int(lio[tag + '_iorequest_cnt'], 16) - int(lio[prev + '_iorequest_cnt'], 16)
        check(ncmd == blk == req, '%s: LIO num_cmds +%d, block layer +%d, initiator iorequest_cnt +%d' % (tag, ncmd, blk, req))
        print('payload.check: LIO %s: num_cmds +%d = block layer +%d = iorequest_cnt +%d' % (tag, ncmd, blk, req))
        prev = tag
    for k in ('num_cmds', 'read_mbytes', 'write_mbytes', 'iorequest_cnt', 'iodone_cnt'):
        check(lio['later_' + k] == lio['after_read_' + k], 'LIO %s moved after the run' % k)
    print('payload.check: LIO read_mbytes %d, write_mbytes %d' % (g('after_read', 'read_mbytes'), g('after_read', 'write_mbytes')))

if fails:
    for f in fails:
        print('payload.check: FAIL: ' + f, file=sys.stderr)
    sys.exit(1)
print('payload.check: all passed')
