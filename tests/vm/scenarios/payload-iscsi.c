/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * payload-iscsi -- a minimal iSCSI initiator (a subset of RFC 7143) for the vm
 * tier's payload scenario. It exists because no initiator Debian ships can
 * send a SCSI command with the ORDERED task attribute: the kernel's SCSI
 * midlayer (and with it iscsi_tcp, tcm_loop, sg_raw/SG_IO) sends every
 * command SIMPLE, and libiscsi 1.19 (libiscsi-dev) hard-codes
 * ISCSI_PDU_SCSI_ATTR_SIMPLE in iscsi_scsi_command_async() with no API to
 * change it. This initiator logs in to LIO's iSCSI target (no
 * authentication, no digests, one connection, ErrorRecoveryLevel 0) and
 * sends SCSI Command PDUs whose ATTR field it chooses.
 *
 *   payload-iscsi -m mixed|tail -t TARGET_IQN -i INITIATOR_IQN [-a ADDR] [-p PORT]
 *                 [-s ISID_BYTE] [-b LBA_BASE_4K] [-n SLOTS] [-r ROUNDS] [-k] -o LOG
 *
 * mixed: ROUNDS rounds; each queues 29 commands at once (all in flight, CmdSN
 *   window permitting) on SLOTS (8) 4 KiB slots starting at LBA_BASE_4K:
 *   SIMPLE WRITE(10) of every slot (version 2r+1), ORDERED SYNCHRONIZE
 *   CACHE(10), SIMPLE READ(10) of every slot (expects 2r+1), ORDERED WRITE(10)
 *   of slot 0 (2r+2), SIMPLE READ(10) of slot 0 (expects 2r+2), SIMPLE
 *   WRITE(10) of slots 1.. (2r+2), ORDERED READ(10) of all slots at once
 *   (expects 2r+2), HEAD OF QUEUE TEST UNIT READY, SIMPLE TEST UNIT READY; then
 *   waits for all 29. A read separated from a write of the same slot by an
 *   ORDERED command must see that write (SAM: the commands before an ORDERED
 *   one complete before it starts, those after it start after it completed).
 * tail: the state after other sessions: phase setup (TEST UNIT READY, READ
 *   CAPACITY(10), as every mode does first), phase A, SIMPLE READ(10) of SLOTS
 *   slots (expects version 2*ROUNDS, the last mixed round's); phase B, one
 *   ORDERED WRITE(10) of slot 0 alone; phase C, a SIMPLE READ(10) of slot 0
 *   (expects B's data); phase D (0.3 s later), 8 SIMPLE TEST UNIT READY;
 *   phase E, one ORDERED TEST UNIT READY alone. Each phase waits for its
 *   commands. With -k, "scsitune-iscsi: phase X" goes to /dev/kmsg before each
 *   phase, so the kernel log can be split by phase.
 *
 * Data: every 8-byte word of a 512-byte block is (lba << 32 | version << 8 |
 * word index); LBAs are in 512-byte blocks (READ CAPACITY must say 512).
 *
 * LOG: one line per command, "cmd phase=P itt=N cmdsn=N attr=SIMPLE|ORDERED|HEAD
 * op=OP lba=N len=BYTES status=0xSS data=ok|bad|-" (itt is the tag LIO's
 * target tracepoints print), then "summary ..." with the totals. Exit status:
 * 0 every command completed GOOD with the data expected, 1 otherwise (the
 * reason is an "error ..." line in LOG and on stderr), 64 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { ATTR_SIMPLE = 1, ATTR_ORDERED = 2, ATTR_HEAD = 3 };
enum { DIR_NONE, DIR_READ, DIR_WRITE };

#define BHS	      48
#define MY_MRDSL      65536 /* our MaxRecvDataSegmentLength */
#define SLOT	      4096
#define BLOCK	      512
#define MAX_TASKS     64
#define PHASE_TIMEOUT 60 /* seconds a batch may take */

struct task {
	uint32_t itt, cmdsn;
	int attr, dir;
	unsigned char cdb[16];
	const char *op;
	uint32_t lba, len;
	unsigned char *buf;
	uint32_t expect; /* version a read must return; 0: none */
	uint32_t got;
	int done, status, data_ok;
};

struct conn {
	int fd;
	uint32_t cmdsn, expcmdsn, maxcmdsn, expstatsn, itt;
	uint32_t tgt_mrdsl, first_burst;
	int immediate;
	unsigned char *out;
	size_t out_len, out_cap;
	unsigned char *in;
	size_t in_len;
	struct task *tasks;
	int ntasks;
};

static FILE *log_fp;
static int kmsg_fd = -1;
static const char *phase = "login";
static unsigned long long n_completed; /* in this process: run_batch's progress */
static unsigned long long n_sent, n_good, n_ordered, n_head, n_simple, wbytes, rbytes, n_bad_data, n_fail;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "payload-iscsi: %s\n", msg);
	if (log_fp) {
		fprintf(log_fp, "error phase=%s %s\n", phase, msg);
		fclose(log_fp);
	}
	exit(1);
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t get24(const unsigned char *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static int sn_gt(uint32_t a, uint32_t b) /* serial number arithmetic, RFC 1982 */
{
	return (int32_t)(a - b) > 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(unsigned char *buf, uint32_t lba, uint32_t nblk, uint32_t version)
{
	for (uint32_t b = 0; b < nblk; b++)
		for (uint32_t w = 0; w < BLOCK / 8; w++) {
			uint64_t v = (uint64_t)(lba + b) << 32 | (uint64_t)version << 8 | w;
			memcpy(buf + (size_t)b * BLOCK + w * 8, &v, 8);
		}
}

/* ---- raw I/O ------------------------------------------------------------ */

static void out_append(struct conn *c, const void *p, size_t n)
{
	if (c->out_len + n > c->out_cap) {
		c->out_cap = (c->out_len + n) * 2;
		c->out = realloc(c->out, c->out_cap);
		if (!c->out)
			die("out of memory");
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
}

/* a PDU: 48-byte header (its DataSegmentLength set here), data, padding */
static void queue_pdu(struct conn *c, unsigned char *bhs, const void *data, uint32_t dlen)
{
	static const unsigned char pad[4];

	bhs[4] = 0;
	bhs[5] = dlen >> 16;
	bhs[6] = dlen >> 8;
	bhs[7] = dlen;
	out_append(c, bhs, BHS);
	if (dlen) {
		out_append(c, data, dlen);
		out_append(c, pad, (4 - dlen % 4) % 4);
	}
}

static void flush_out(struct conn *c, int block)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = send(c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL | (block ? 0 : MSG_DONTWAIT));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (!block && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			die("send: %s", strerror(errno));
		}
		off += (size_t)n;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
}

/* length of the PDU at the start of in[], or 0 while incomplete */
static size_t pdu_complete(const struct conn *c)
{
	size_t total;

	if (c->in_len < BHS)
		return 0;
	total = BHS + (size_t)c->in[4] * 4 + ((get24(c->in + 5) + 3) & ~3u);
	if (total > BHS + 1024 + MY_MRDSL)
		die("PDU of %zu bytes (opcode 0x%02x): more than we allow", total, c->in[0]);
	return c->in_len >= total ? total : 0;
}

static void read_some(struct conn *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, BHS + 1024 + MY_MRDSL - c->in_len, 0);

	if (n < 0 && errno != EINTR && errno != EAGAIN)
		die("recv: %s", strerror(errno));
	if (n == 0)
		die("the target closed the connection");
	if (n > 0)
		c->in_len += (size_t)n;
}

static void consume(struct conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/* ---- login ---------------------------------------------------------------- */

static const char *key_value(const unsigned char *data, uint32_t len, const char *key)
{
	size_t kl = strlen(key);

	for (uint32_t i = 0; i < len;) {
		const char *kv = (const char *)data + i;
		size_t l = strnlen(kv, len - i);

		if (l > kl && !strncmp(kv, key, kl) && kv[kl] == '=')
			return kv + kl + 1;
		i += (uint32_t)l + 1;
	}
	return NULL;
}

static void add_key(char *buf, size_t *len, size_t cap, const char *key, const char *value)
{
	int n = snprintf(buf + *len, cap - *len, "%s=%s", key, value);

	if (n < 0 || (size_t)n + 1 > cap - *len)
		die("login keys too long");
	*len += (size_t)n + 1; /* keep the NUL */
}

static const unsigned char *login_step(struct conn *c, const unsigned char isid[6], int csg, int nsg, const char *keys,
				       size_t klen, uint32_t *rlen)
{
	unsigned char bhs[BHS] = {0};
	size_t total;

	bhs[0] = 0x40 | 0x03; /* immediate, Login Request */
	bhs[1] = 0x80 | csg << 2 | nsg;
	memcpy(bhs + 8, isid, 6);
	memcpy(bhs + 16, &c->itt, 4);
	put32(bhs + 24, c->cmdsn);
	put32(bhs + 28, c->expstatsn);
	queue_pdu(c, bhs, keys, (uint32_t)klen);
	flush_out(c, 1);
	while (!(total = pdu_complete(c)))
		read_some(c);
	if ((c->in[0] & 0x3f) != 0x23)
		die("login: opcode 0x%02x in reply to a Login Request", c->in[0]);
	if (c->in[36] != 0)
		die("login rejected: status class %u detail %u (csg %d)", c->in[36], c->in[37], csg);
	c->expstatsn = get32(c->in + 24) + 1;
	c->expcmdsn = get32(c->in + 28);
	c->maxcmdsn = get32(c->in + 32);
	*rlen = get24(c->in + 5);
	return c->in + BHS;
}

static void login(struct conn *c, const char *initiator, const char *target, unsigned char isid_byte)
{
	const unsigned char isid[6] = {0x80, 0x53, 0x54, 0x55, 0x00, isid_byte}; /* random format */
	char keys[1024];
	size_t klen = 0;
	uint32_t rlen;
	const unsigned char *r;
	const char *v;
	int ok = 0;

	add_key(keys, &klen, sizeof(keys), "InitiatorName", initiator);
	add_key(keys, &klen, sizeof(keys), "TargetName", target);
	add_key(keys, &klen, sizeof(keys), "SessionType", "Normal");
	add_key(keys, &klen, sizeof(keys), "AuthMethod", "None");
	r = login_step(c, isid, 0, 1, keys, klen, &rlen);
	if (!(c->in[1] & 0x80) || (c->in[1] & 3) != 1)
		die("login: the target did not move to operational negotiation (flags 0x%02x)", c->in[1]);
	v = key_value(r, rlen, "AuthMethod");
	if (v && strcmp(v, "None"))
		die("login: the target wants AuthMethod=%s", v);
	consume(c, pdu_complete(c));

	klen = 0;
	add_key(keys, &klen, sizeof(keys), "HeaderDigest", "None");
	add_key(keys, &klen, sizeof(keys), "DataDigest", "None");
	add_key(keys, &klen, sizeof(keys), "MaxConnections", "1");
	add_key(keys, &klen, sizeof(keys), "InitialR2T", "Yes");
	add_key(keys, &klen, sizeof(keys), "ImmediateData", "Yes");
	add_key(keys, &klen, sizeof(keys), "MaxRecvDataSegmentLength", "65536");
	add_key(keys, &klen, sizeof(keys), "MaxBurstLength", "262144");
	add_key(keys, &klen, sizeof(keys), "FirstBurstLength", "65536");
	add_key(keys, &klen, sizeof(keys), "DefaultTime2Wait", "0");
	add_key(keys, &klen, sizeof(keys), "DefaultTime2Retain", "0");
	add_key(keys, &klen, sizeof(keys), "MaxOutstandingR2T", "1");
	add_key(keys, &klen, sizeof(keys), "DataPDUInOrder", "Yes");
	add_key(keys, &klen, sizeof(keys), "DataSequenceInOrder", "Yes");
	add_key(keys, &klen, sizeof(keys), "ErrorRecoveryLevel", "0");
	c->tgt_mrdsl = 8192; /* RFC 7143 default until the target declares its own */
	c->first_burst = 65536;
	c->immediate = 1;
	for (int i = 0; i < 4 && !ok; i++) {
		r = login_step(c, isid, 1, 3, keys, klen, &rlen);
		if ((v = key_value(r, rlen, "MaxRecvDataSegmentLength")))
			c->tgt_mrdsl = (uint32_t)strtoul(v, NULL, 10);
		if ((v = key_value(r, rlen, "FirstBurstLength")))
			c->first_burst = (uint32_t)strtoul(v, NULL, 10);
		if ((v = key_value(r, rlen, "ImmediateData")))
			c->immediate = !strcmp(v, "Yes");
		if ((v = key_value(r, rlen, "HeaderDigest")) && strcmp(v, "None"))
			die("login: HeaderDigest=%s", v);
		if ((v = key_value(r, rlen, "DataDigest")) && strcmp(v, "None"))
			die("login: DataDigest=%s", v);
		ok = (c->in[1] & 0x80) && (c->in[1] & 3) == 3;
		consume(c, pdu_complete(c));
		klen = 0; /* a further round answers nothing new */
	}
	if (!ok)
		die("login: the target did not move to full feature phase");
	if (c->tgt_mrdsl < 512 || c->first_burst < 512)
		die("login: MaxRecvDataSegmentLength %u FirstBurstLength %u", c->tgt_mrdsl, c->first_burst);
	fprintf(log_fp,
		"login initiator=%s target=%s target_mrdsl=%u first_burst=%u immediate=%d cmdsn=%u maxcmdsn=%u\n",
		initiator, target, c->tgt_mrdsl, c->first_burst, c->immediate, c->cmdsn, c->maxcmdsn);
}

static void logout(struct conn *c)
{
	unsigned char bhs[BHS] = {0};
	size_t total;

	phase = "logout";
	c->itt++;
	bhs[0] = 0x40 | 0x06; /* immediate, Logout Request */
	bhs[1] = 0x80;	      /* close the session */
	memcpy(bhs + 16, &c->itt, 4);
	put32(bhs + 24, c->cmdsn);
	put32(bhs + 28, c->expstatsn);
	queue_pdu(c, bhs, NULL, 0);
	flush_out(c, 1);
	for (;;) {
		while (!(total = pdu_complete(c)))
			read_some(c);
		if ((c->in[0] & 0x3f) == 0x26)
			break;
		if ((c->in[0] & 0x3f) != 0x20) /* a NOP-In may cross it */
			die("logout: opcode 0x%02x", c->in[0]);
		consume(c, total);
	}
	if (c->in[2] != 0)
		die("logout: response %u", c->in[2]);
	consume(c, total);
	fprintf(log_fp, "logout ok\n");
}

/* ---- SCSI commands ---------------------------------------------------------- */

static struct task *find_task(struct conn *c, const unsigned char *bhs)
{
	uint32_t itt;

	memcpy(&itt, bhs + 16, 4);
	for (int i = 0; i < c->ntasks; i++)
		if (c->tasks[i].itt == itt && !c->tasks[i].done)
			return &c->tasks[i];
	die("opcode 0x%02x for itt %u, which is not in flight", bhs[0], itt);
}

static void send_cmd(struct conn *c, struct task *t)
{
	unsigned char bhs[BHS] = {0};
	uint32_t imm = 0;

	t->itt = ++c->itt;
	t->cmdsn = c->cmdsn++;
	bhs[0] = 0x01; /* SCSI Command */
	bhs[1] = 0x80 | (uint8_t)t->attr;
	if (t->dir == DIR_READ)
		bhs[1] |= 0x40;
	if (t->dir == DIR_WRITE) {
		bhs[1] |= 0x20;
		if (c->immediate) {
			imm = t->len;
			if (imm > c->first_burst)
				imm = c->first_burst;
			if (imm > c->tgt_mrdsl)
				imm = c->tgt_mrdsl;
		}
	}
	memcpy(bhs + 16, &t->itt, 4); /* host order: the tag LIO traces */
	put32(bhs + 20, t->len);
	put32(bhs + 24, t->cmdsn);
	put32(bhs + 28, c->expstatsn);
	memcpy(bhs + 32, t->cdb, 16);
	queue_pdu(c, bhs, t->buf, imm);
	n_sent++;
	if (t->attr == ATTR_ORDERED)
		n_ordered++;
	else if (t->attr == ATTR_HEAD)
		n_head++;
	else
		n_simple++;
}

static void send_data_out(struct conn *c, struct task *t, const unsigned char *r2t)
{
	uint32_t off = get32(r2t + 40), len = get32(r2t + 44), sn = 0;

	if ((uint64_t)off + len > t->len)
		die("R2T for itt %u asks for %u bytes at %u of %u", t->itt, len, off, t->len);
	while (len) {
		unsigned char bhs[BHS] = {0};
		uint32_t n = len < c->tgt_mrdsl ? len : c->tgt_mrdsl;

		bhs[0] = 0x05; /* SCSI Data-Out */
		bhs[1] = n == len ? 0x80 : 0;
		memcpy(bhs + 16, &t->itt, 4);
		memcpy(bhs + 20, r2t + 20, 4); /* Target Transfer Tag */
		put32(bhs + 28, c->expstatsn);
		put32(bhs + 36, sn++);
		put32(bhs + 40, off);
		queue_pdu(c, bhs, t->buf + off, n);
		off += n;
		len -= n;
	}
}

static void complete(struct task *t, int status)
{
	t->done = 1;
	t->status = status;
	t->data_ok = -1;
	n_completed++;
	if (status == 0)
		n_good++;
	else if (strcmp(phase, "setup")) /* check_lun() judges its own */
		n_fail++;
	if (t->dir == DIR_READ && t->expect) {
		unsigned char *want = malloc(t->len);

		if (!want)
			die("out of memory");
		fill(want, t->lba, t->len / BLOCK, t->expect);
		t->data_ok = t->got == t->len && !memcmp(want, t->buf, t->len);
		free(want);
		if (!t->data_ok)
			n_bad_data++;
	}
	if (t->dir == DIR_WRITE && status == 0)
		wbytes += t->len;
	if (t->dir == DIR_READ && status == 0)
		rbytes += t->got;
	fprintf(log_fp, "cmd phase=%s itt=%u cmdsn=%u attr=%s op=%s lba=%u len=%u status=0x%02x data=%s\n", phase,
		t->itt, t->cmdsn,
		t->attr == ATTR_ORDERED ? "ORDERED"
		: t->attr == ATTR_HEAD	? "HEAD"
					: "SIMPLE",
		t->op, t->lba, t->len, status,
		t->data_ok < 0 ? "-"
		: t->data_ok   ? "ok"
			       : "bad");
}

static void handle_pdu(struct conn *c, const unsigned char *p)
{
	int op = p[0] & 0x3f;
	uint32_t dlen = get24(p + 5);
	const unsigned char *data = p + BHS + p[4] * 4;
	struct task *t;

	if (op == 0x21 || (op == 0x25 && (p[1] & 0x01)))
		c->expstatsn = get32(p + 24) + 1; /* a status: StatSN used */
	else if (op == 0x20 && sn_gt(get32(p + 24), c->expstatsn))
		c->expstatsn = get32(p + 24); /* NOP-In: the next StatSN, not used */
	if (sn_gt(get32(p + 28), c->expcmdsn))
		c->expcmdsn = get32(p + 28);
	if (sn_gt(get32(p + 32), c->maxcmdsn))
		c->maxcmdsn = get32(p + 32);
	switch (op) {
	case 0x21: /* SCSI Response */
		t = find_task(c, p);
		if (p[2] != 0)
			die("itt %u: iSCSI response 0x%02x (not completed at the target)", t->itt, p[2]);
		if (p[3] == 2 && dlen >= 2 + 14) {
			const unsigned char *s = data + 2;
			fprintf(log_fp, "sense itt=%u key=0x%x asc=0x%02x ascq=0x%02x\n", t->itt, s[2] & 0xf, s[12],
				s[13]);
		}
		complete(t, p[3]);
		break;
	case 0x25: /* SCSI Data-In */
		t = find_task(c, p);
		if (t->dir != DIR_READ || (uint64_t)get32(p + 40) + dlen > t->len)
			die("itt %u: Data-In of %u bytes at %u does not fit", t->itt, dlen, get32(p + 40));
		memcpy(t->buf + get32(p + 40), data, dlen);
		t->got += dlen;
		if (p[1] & 0x01)
			complete(t, p[3]);
		break;
	case 0x31: /* R2T */
		t = find_task(c, p);
		if (t->dir != DIR_WRITE)
			die("itt %u: R2T for a command that writes nothing", t->itt);
		send_data_out(c, t, p);
		break;
	case 0x20: /* NOP-In: a ping from the target needs an answer */
		if (get32(p + 20) != 0xffffffff) {
			unsigned char bhs[BHS] = {0};

			bhs[0] = 0x40; /* immediate NOP-Out */
			bhs[1] = 0x80;
			memcpy(bhs + 8, p + 8, 8);
			memset(bhs + 16, 0xff, 4);
			memcpy(bhs + 20, p + 20, 4);
			put32(bhs + 24, c->cmdsn);
			put32(bhs + 28, c->expstatsn);
			queue_pdu(c, bhs, NULL, 0);
		}
		break;
	case 0x32:
		die("asynchronous message, event %u", p[36]);
	case 0x3f:
		die("the target rejected a PDU: reason 0x%02x, opcode 0x%02x", p[2], p[BHS]);
	default:
		die("unexpected opcode 0x%02x", p[0]);
	}
}

/* send all n tasks (CmdSN window permitting), wait until all completed */
static void run_batch(struct conn *c, struct task *tasks, int n)
{
	double deadline = now() + PHASE_TIMEOUT;
	unsigned long long start = n_completed;
	int next = 0, left = n;

	c->tasks = tasks;
	c->ntasks = n;
	while (left > 0 || c->out_len) {
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		size_t total;

		while (next < n && !sn_gt(c->cmdsn, c->maxcmdsn))
			send_cmd(c, &tasks[next++]);
		if (c->out_len)
			pfd.events |= POLLOUT;
		if (now() > deadline)
			die("%d of %d commands still outstanding after %d s (%d not sent; CmdSN %u, MaxCmdSN %u)", left,
			    n, PHASE_TIMEOUT, n - next, c->cmdsn, c->maxcmdsn);
		if (poll(&pfd, 1, 1000) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd.revents & POLLOUT)
			flush_out(c, 0);
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			read_some(c);
			while ((total = pdu_complete(c))) {
				handle_pdu(c, c->in);
				consume(c, total);
			}
			left = n - (int)(n_completed - start);
		}
	}
}

/* ---- building commands ------------------------------------------------------ */

static struct task rw(int attr, int write, uint32_t lba, uint32_t nblk, uint32_t version)
{
	struct task t = {.attr = attr, .dir = write ? DIR_WRITE : DIR_READ, .lba = lba, .len = nblk * BLOCK};

	t.op = write ? "WRITE10" : "READ10";
	t.cdb[0] = write ? 0x2a : 0x28;
	put32(t.cdb + 2, lba);
	t.cdb[7] = nblk >> 8;
	t.cdb[8] = nblk;
	t.buf = calloc(1, t.len);
	if (!t.buf)
		die("out of memory");
	if (write)
		fill(t.buf, lba, nblk, version);
	else
		t.expect = version;
	return t;
}

static struct task nodata(int attr, uint8_t opcode, const char *name)
{
	struct task t = {.attr = attr, .dir = DIR_NONE, .op = name};

	t.cdb[0] = opcode; /* TEST UNIT READY; SYNCHRONIZE CACHE(10) of the whole medium; READ CAPACITY(10) */
	return t;
}

static void free_tasks(struct task *t, int n)
{
	for (int i = 0; i < n; i++)
		free(t[i].buf);
}

static void mark(const char *name)
{
	char msg[64];
	int len = snprintf(msg, sizeof(msg), "scsitune-iscsi: phase %s\n", name);

	phase = name;
	if (kmsg_fd >= 0 && write(kmsg_fd, msg, (size_t)len) != len)
		die("write /dev/kmsg: %s", strerror(errno));
}

/* the LUN must be ready and have 512-byte blocks, enough of them */
static void check_lun(struct conn *c, uint32_t last_lba)
{
	struct task t;
	int tries = 0;

	phase = "setup";
	do { /* a unit attention (e.g. after the LUN was mapped) clears on the first report */
		t = nodata(ATTR_SIMPLE, 0x00, "TUR");
		run_batch(c, &t, 1);
	} while (t.status != 0 && ++tries < 3);
	if (t.status != 0)
		die("TEST UNIT READY: status 0x%02x", t.status);
	t = nodata(ATTR_SIMPLE, 0x25, "READCAP10");
	t.dir = DIR_READ;
	t.len = 8;
	t.buf = calloc(1, 8);
	if (!t.buf)
		die("out of memory");
	run_batch(c, &t, 1);
	if (t.status != 0 || t.got != 8)
		die("READ CAPACITY(10): status 0x%02x, %u bytes", t.status, t.got);
	if (get32(t.buf + 4) != BLOCK || get32(t.buf) < last_lba)
		die("READ CAPACITY(10): block size %u, last LBA %u (need 512 and %u)", get32(t.buf + 4), get32(t.buf),
		    last_lba);
	free(t.buf);
}

static void mixed(struct conn *c, uint32_t base, int slots, int rounds)
{
	const uint32_t spb = SLOT / BLOCK;
	char name[32];

	for (int r = 0; r < rounds; r++) {
		struct task t[MAX_TASKS];
		uint32_t v1 = 2 * (uint32_t)r + 1, v2 = v1 + 1;
		int n = 0;

		for (int k = 0; k < slots; k++)
			t[n++] = rw(ATTR_SIMPLE, 1, base + k * spb, spb, v1);
		t[n++] = nodata(ATTR_ORDERED, 0x35, "SYNC10");
		for (int k = 0; k < slots; k++)
			t[n++] = rw(ATTR_SIMPLE, 0, base + k * spb, spb, v1);
		t[n++] = rw(ATTR_ORDERED, 1, base, spb, v2);
		t[n++] = rw(ATTR_SIMPLE, 0, base, spb, v2);
		for (int k = 1; k < slots; k++)
			t[n++] = rw(ATTR_SIMPLE, 1, base + k * spb, spb, v2);
		t[n++] = rw(ATTR_ORDERED, 0, base, spb * slots, v2);
		t[n++] = nodata(ATTR_HEAD, 0x00, "TUR");
		t[n++] = nodata(ATTR_SIMPLE, 0x00, "TUR");
		snprintf(name, sizeof(name), "mixed%d", r);
		phase = name;
		run_batch(c, t, n);
		free_tasks(t, n);
	}
}

static void tail(struct conn *c, uint32_t base, int slots, int rounds)
{
	const uint32_t spb = SLOT / BLOCK, last = 2 * (uint32_t)rounds;
	struct task t[MAX_TASKS];
	int n = 0;

	mark("A");
	for (int k = 0; k < slots; k++)
		t[n++] = rw(ATTR_SIMPLE, 0, base + k * spb, spb, last);
	run_batch(c, t, n);
	free_tasks(t, n);
	mark("B");
	t[0] = rw(ATTR_ORDERED, 1, base, spb, last + 1);
	run_batch(c, t, 1);
	free_tasks(t, 1);
	mark("C");
	t[0] = rw(ATTR_SIMPLE, 0, base, spb, last + 1);
	run_batch(c, t, 1);
	free_tasks(t, 1);
	usleep(300000);
	mark("D");
	for (n = 0; n < 8; n++)
		t[n] = nodata(ATTR_SIMPLE, 0x00, "TUR");
	run_batch(c, t, n);
	mark("E");
	t[0] = nodata(ATTR_ORDERED, 0x00, "TUR");
	run_batch(c, t, 1);
	mark("end");
}

static void usage(void)
{
	fprintf(stderr, "usage: payload-iscsi -m mixed|tail -t TARGET_IQN -i INITIATOR_IQN [-a ADDR] [-p PORT] "
			"[-s ISID_BYTE] [-b LBA_BASE_4K] [-n SLOTS] [-r ROUNDS] [-k] -o LOG\n");
	exit(64);
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *target = NULL, *initiator = NULL, *addr = "127.0.0.1", *out = NULL;
	int port = 3260, slots = 8, rounds = 10, opt, one = 1;
	unsigned isid = 1, base4k = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct conn c = {0};

	while ((opt = getopt(argc, argv, "m:t:i:a:p:s:b:n:r:ko:")) != -1) {
		switch (opt) {
		case 'm':
			mode = optarg;
			break;
		case 't':
			target = optarg;
			break;
		case 'i':
			initiator = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 's':
			isid = (unsigned)atoi(optarg);
			break;
		case 'b':
			base4k = (unsigned)atoi(optarg);
			break;
		case 'n':
			slots = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'k':
			kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
			if (kmsg_fd < 0) {
				fprintf(stderr, "payload-iscsi: /dev/kmsg: %s\n", strerror(errno));
				return 1;
			}
			break;
		case 'o':
			out = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !mode || !target || !initiator || !out || (strcmp(mode, "mixed") && strcmp(mode, "tail")))
		usage();
	if (slots < 1 || slots > 16 || rounds < 1 || rounds > 100000 || isid > 255 ||
	    inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || port < 1 || port > 65535)
		usage();
	sa.sin_port = htons((uint16_t)port);
	log_fp = fopen(out, "w");
	if (!log_fp) {
		fprintf(stderr, "payload-iscsi: %s: %s\n", out, strerror(errno));
		return 1;
	}
	setvbuf(log_fp, NULL, _IOLBF, 0);
	c.in = malloc(BHS + 1024 + MY_MRDSL);
	if (!c.in)
		die("out of memory");
	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c.fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect %s:%d: %s", addr, port, strerror(errno));
	c.cmdsn = 1;
	login(&c, initiator, target, (unsigned char)isid);
	if (kmsg_fd >= 0)
		mark("setup");
	check_lun(&c, (base4k + (unsigned)slots) * (SLOT / BLOCK));
	if (!strcmp(mode, "mixed"))
		mixed(&c, base4k * (SLOT / BLOCK), slots, rounds);
	else
		tail(&c, base4k * (SLOT / BLOCK), slots, rounds);
	logout(&c);
	close(c.fd);
	fprintf(log_fp,
		"summary mode=%s sent=%llu good=%llu failed=%llu simple=%llu ordered=%llu head=%llu "
		"write_bytes=%llu read_bytes=%llu bad_data=%llu\n",
		mode, n_sent, n_good, n_fail, n_simple, n_ordered, n_head, wbytes, rbytes, n_bad_data);
	fclose(log_fp);
	if (n_fail || n_bad_data || n_good != n_sent) {
		fprintf(stderr, "payload-iscsi: %llu commands failed, %llu reads returned other data\n", n_fail,
			n_bad_data);
		return 1;
	}
	return 0;
}
