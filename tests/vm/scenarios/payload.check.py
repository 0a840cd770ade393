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
             'insmod_tcm_loop', 'lio_control', 'lio_enable', 'lio_nexus', 'lio_link',
             'insmod_iscsi_target_mod', 'iscsi_tpg_enable', 'iscsi_rmdir_dev', 'rmmod_iscsi_target_mod',
             'rmmod_tcm_loop', 'rmmod_target_core_mod'):
    check(steps.get(want) == '0', 'step %s: exit %s (steps.log has its output)' % (want, steps.get(want, 'never ran')))
for n, rc in steps.items():
    check(rc == '0', 'step %s exited %s' % (n, rc))
dmesg = read('dmesg.txt')
check('disagrees about version' not in dmesg, 'dmesg: a module disagrees about a symbol version (CRC mismatch)')
check('Unknown symbol' not in dmesg, 'dmesg: unknown symbol while loading a module')
for bad in ('BUG:', 'WARNING:', 'Oops', 'general protection', 'kernel BUG'):
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
    # fio's direct I/Os are bios: each became a request or merged into one
    merged = sum(int(io['after_stat'].split()[k]) - int(io['before_stat'].split()[k]) for k in (1, 5))
    check(blk + merged == ios, '%s: block layer completed %d requests and merged %d bios for fio\'s %d I/Os'
          % (name, blk, merged, ios))
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

# --- patch E: ORDERED task attributes through LIO's iSCSI target --------------------
def iscsi_checks():
    info = kv('iscsi.txt')
    if not check('initiator' not in info, 'iscsi.txt: %s' % info.get('initiator')):
        return
    rounds = int(info['rounds'])
    ini = {1: 'iqn.2003-01.org.scsitune:init1', 2: 'iqn.2003-01.org.scsitune:init2',
           3: 'iqn.2003-01.org.scsitune:init3'}
    logs = {1: 'iscsi-mixed1', 2: 'iscsi-mixed2', 3: 'iscsi-tail'}
    cmds = {}   # (initiator, itt) -> the command as payload-iscsi logged it
    per = {}    # session -> [commands]
    for i, name in logs.items():
        rc = read(name + '.rc').strip()
        if not check(rc == '0', '%s exited %s: %s' % (name, rc, (read(name + '.err').strip() or
                                                                  read(name + '.log')[-400:]))):
            continue
        text = read(name + '.log')
        check('\nlogout ok\n' in text, '%s: no clean logout' % name)
        per[i] = []
        for line in text.splitlines():
            f = line.split()
            if f[0] != 'cmd':
                continue
            c = dict(x.split('=', 1) for x in f[1:])
            c['len'] = int(c['len'])
            c['session'] = i
            per[i].append(c)
            cmds[(ini[i], int(c['itt']))] = c
        summ = dict(x.split('=', 1) for x in text.splitlines()[-1].split()[1:])
        check(int(summ['sent']) == len(per[i]), '%s: sent %s, logged %d' % (name, summ['sent'], len(per[i])))
    if len(per) != 3:
        return
    for i in (1, 2):
        n = [c for c in per[i] if c['phase'] != 'setup']
        check(len(n) == 29 * rounds, '%s: %d commands, expected 29 x %d' % (logs[i], len(n), rounds))
        check(sum(c['attr'] == 'ORDERED' for c in n) == 3 * rounds, '%s: ORDERED count' % logs[i])
        check(sum(c['attr'] == 'HEAD' for c in n) == rounds, '%s: HEAD OF QUEUE count' % logs[i])
    tail = [c for c in per[3] if c['phase'] != 'setup']
    check([c['phase'] + c['attr'][0] for c in tail] == ['AS'] * 16 + ['BO', 'CS'] + ['DS'] * 8 + ['EO'],
          'iscsi-tail: phases %r' % [c['phase'] + c['attr'][0] for c in tail])
    allc = [c for i in (1, 2, 3) for c in per[i]]
    bad = [c for c in allc if c['status'] != '0x00' and c['phase'] != 'setup']
    check(not bad, '%d commands did not complete GOOD, e.g. %r' % (len(bad), bad[:3]))
    bad = [c for c in allc if c['data'] == 'bad']
    check(not bad, '%d reads returned other data than the ORDERED rules allow, e.g. %r' % (len(bad), bad[:3]))
    nread = sum(c['data'] == 'ok' for c in allc)
    check(nread == 2 * rounds * 10 + 17, 'only %d reads were checked' % nread)

    # the target's own record (tracepoints): every command, its attribute, GOOD
    text = read('iscsi-trace.txt')
    m = re.search(r'entries-in-buffer/entries-written: (\d+)/(\d+)', text)
    check(m and m.group(1) == m.group(2), 'trace buffer overran: %s' % (m and m.group(0)))
    ev = re.compile(r'target_(sequencer_start|cmd_complete): (\S+) (?:->|<-) LUN \d+ tag (0x[0-9a-f]+|0) '
                    r'(?:status (\S+) )?.*\(TA:(\w+) C:')
    seen = {'sequencer_start': {}, 'cmd_complete': {}}
    for line in text.splitlines():
        e = ev.search(line)
        if e and e.group(2) in ini.values():
            key = (e.group(2), int(e.group(3), 16))
            check(key not in seen[e.group(1)], 'trace: %s twice for %r' % (e.group(1), key))
            seen[e.group(1)][key] = (e.group(4), e.group(5))
    for what in ('sequencer_start', 'cmd_complete'):
        check(set(seen[what]) == set(cmds), 'trace %s: %d events, %d commands sent (missing %r, extra %r)'
              % (what, len(seen[what]), len(cmds), sorted(set(cmds) - set(seen[what]))[:3],
                 sorted(set(seen[what]) - set(cmds))[:3]))
    wrong = [(k, c['attr'], seen['sequencer_start'].get(k), seen['cmd_complete'].get(k)) for k, c in cmds.items()
             if seen['sequencer_start'].get(k, (0, 0))[1] != c['attr']
             or seen['cmd_complete'].get(k, (0, 0))[1] != c['attr']
             or (seen['cmd_complete'].get(k, (0, 0))[0] != 'GOOD' and c['phase'] != 'setup')]
    check(not wrong, 'the target saw %d commands with another attribute or status, e.g. %r' % (len(wrong), wrong[:3]))
    tordered = sum(a == 'ORDERED' for _, a in seen['cmd_complete'].values())
    print('payload.check: iSCSI: %d commands (%d ORDERED, %d HEAD OF QUEUE) from 3 sessions, all GOOD; the target '
          'traced %d ORDERED completions; %d reads returned the data the ORDERED rules require'
          % (len(cmds), sum(c['attr'] == 'ORDERED' for c in allc), sum(c['attr'] == 'HEAD' for c in allc), tordered,
             nread))

    # target_handle_task_attr() (dynamic debug), split by phase: SIMPLE commands
    # waited behind ORDERED ones in the mixed phase; after it, and after the lone
    # ORDERED commands, a SIMPLE one runs at once: delayed_cmd_count is 0 and the
    # per-CPU count is live again (an ORDERED command runs only once it is zero)
    part, parts = None, {}
    for line in read('iscsi-kmsg.txt').splitlines():
        mk = re.search(r'scsitune-iscsi: phase (\w+)', line)
        if mk:
            part = mk.group(1)
            parts[part] = {'ordered': 0, 'delayed_simple': 0, 'head': 0}
        elif part and 'Added ORDERED for CDB' in line:
            parts[part]['ordered'] += 1
        elif part and re.search(r'Task Attr: 0x20 to delayed CMD list', line):
            parts[part]['delayed_simple'] += 1
        elif part and 'Added HEAD_OF_QUEUE' in line:
            parts[part]['head'] += 1
    check(list(parts) == ['mixed', 'setup', 'A', 'B', 'C', 'D', 'E', 'end'], 'kernel log phases %r' % list(parts))
    if list(parts) == ['mixed', 'setup', 'A', 'B', 'C', 'D', 'E', 'end']:
        check(parts['mixed']['ordered'] == 6 * rounds, 'mixed: the target queued %d ORDERED commands, sent %d'
              % (parts['mixed']['ordered'], 6 * rounds))
        check(parts['mixed']['head'] == 2 * rounds, 'mixed: %d HEAD OF QUEUE' % parts['mixed']['head'])
        check(parts['mixed']['delayed_simple'] > 0, 'mixed: no SIMPLE command ever waited behind an ORDERED one')
        for ph in ('setup', 'A', 'D'):
            check(parts[ph]['delayed_simple'] == 0 and parts[ph]['ordered'] == 0,
                  'phase %s: %r (SIMPLE commands delayed with nothing ORDERED queued: a count not back at zero)'
                  % (ph, parts[ph]))
        check(parts['B']['ordered'] == 1 and parts['E']['ordered'] == 1, 'lone ORDERED: %r %r' % (parts['B'], parts['E']))
        print('payload.check: target_handle_task_attr: mixed %(ordered)d ORDERED queued, %(delayed_simple)d SIMPLE '
              'delayed behind them' % parts['mixed'] + '; after: setup/A/D %d/%d/%d SIMPLE delayed, C %d (the '
              'per-CPU count comes back lazily, with the first SIMPLE after an ORDERED)'
              % (parts['setup']['delayed_simple'], parts['A']['delayed_simple'], parts['D']['delayed_simple'],
                 parts['C']['delayed_simple']))

    # statistics of the fresh rd1: device (patch D), port, per initiator (patch D's se_dev_entry)
    def sums(cs):
        rd = sum(c['len'] for c in cs if c['op'].startswith('READ'))
        wr = sum(c['len'] for c in cs if c['op'].startswith('WRITE'))
        return len(cs), rd >> 20, wr >> 20
    want = {'lu': sums(allc), 'port': sums(allc)}
    for i in (1, 2, 3):
        want['acl%d' % i] = sums(per[i])
    for who, (n, rmb, wmb) in want.items():
        nk = 'in_cmds' if who == 'port' else 'num_cmds'
        got = tuple(int(info['after_%s_%s' % (who, k)]) - int(info['before_%s_%s' % (who, k)])
                    for k in (nk, 'read_mbytes', 'write_mbytes'))
        check(got == (n, rmb, wmb), '%s statistics: %s/read_mbytes/write_mbytes grew by %r, expected %r'
              % (who, nk, got, (n, rmb, wmb)))
        check(all(int(info['before_%s_%s' % (who, k)]) == 0 for k in (nk, 'read_mbytes', 'write_mbytes')),
              '%s statistics of a fresh device were not 0' % who)
    print('payload.check: iSCSI statistics: num_cmds +%d (device = port = sum of the three initiators), '
          'read_mbytes +%d, write_mbytes +%d' % want['lu'])
    t0, t1, _, t2 = info['seconds_mixed'].split()
    print('payload.check: iSCSI: mixed phase %.1f s, tail %.1f s (guest uptime)'
          % (float(t1) - float(t0), float(t2) - float(t1)))


if check(os.path.exists(os.path.join(R, 'iscsi.txt')), 'iscsi.txt missing: the ORDERED part never ran'):
    iscsi_checks()
for name in ('dmesg-before-iscsi.txt', 'iscsi-kmsg.txt'):
    if check(os.path.exists(os.path.join(R, name)), '%s missing' % name):
        text = read(name)
        for bad in ('BUG:', 'WARNING:', 'Oops', 'general protection', 'kernel BUG', 'disagrees about version',
                    'Unknown symbol'):
            check(bad not in text, '%s has %r' % (name, bad))

if fails:
    for f in fails:
        print('payload.check: FAIL: ' + f, file=sys.stderr)
    sys.exit(1)
print('payload.check: all passed')
