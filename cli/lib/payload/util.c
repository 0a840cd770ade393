/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/macro.h"

int stune_read_fd(int fd, size_t max, uint8_t **data, size_t *len)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > max)
			return -EFBIG;
		cap = (size_t)st.st_size + 1; /* +1: see the end without another allocation */
	}
	for (;;) {
		if (!buf || n == cap) {
			size_t ncap = !buf && cap ? cap : cap ? cap * 2 : 65536;
			if (buf && cap > max)
				return -EFBIG;
			uint8_t *b = realloc(buf, ncap);
			if (!b)
				return -ENOMEM;
			buf = b;
			cap = ncap;
		}
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > max)
			return -EFBIG;
	}
	*data = steal_pointer(&buf);
	*len = n;
	if (!*data && !(*data = malloc(1)))
		return -ENOMEM;
	return 0;
}

static int read_regular(int fd, size_t max, uint8_t **data, size_t *len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return stune_read_fd(fd, max, data, len);
}

int stune_read_host_file(const char *host, size_t max, uint8_t **data, size_t *len)
{
	/* O_NONBLOCK: opening a FIFO must not hang before fstat refuses it. */
	_cleanup_close_ int fd = open(host, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return negative_errno();
	return read_regular(fd, max, data, len);
}

int stune_read_root_file(const struct stune_root *r, const char *path, size_t max, uint8_t **data, size_t *len)
{
	_cleanup_close_ int fd = stune_root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	return read_regular(fd, max, data, len);
}

void stune_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void stune_sha256_hex(const void *data, size_t len, char out[STUNE_SHA256_HEX])
{
	uint8_t h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, data, len);
	stune_hex(h, sizeof(h), out);
}

int stune_sha256_root_file(const struct stune_root *r, const char *path, char out[STUNE_SHA256_HEX])
{
	_cleanup_close_ int fd = stune_root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	crypto_hash_sha256_state s;
	crypto_hash_sha256_init(&s);
	static __thread uint8_t buf[1 << 16];
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			break;
		crypto_hash_sha256_update(&s, buf, (unsigned long long)k);
	}
	uint8_t h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&s, h);
	stune_hex(h, sizeof(h), out);
	return 0;
}

int stune_dir_write(int dfd, const char *name, const void *data, size_t len, mode_t mode)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return negative_errno();
	const uint8_t *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		p += w;
		len -= (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0)
		return negative_errno();
	return 0;
}

int stune_dir_sync(int dfd)
{
	return fsync(dfd) < 0 ? negative_errno() : 0;
}

static int chroot_setup(void *data)
{
	const char *dir = data;
	if (!dir)
		return 0;
	if (chroot(dir) < 0 || chdir("/") < 0)
		return negative_errno();
	return 0;
}

int stune_run(const char *const *argv, const char *chroot_dir, char **output)
{
	return stune_run_setup(argv, chroot_setup, (void *)chroot_dir, output);
}

int stune_run_setup(const char *const *argv, int (*setup)(void *data), void *data, char **output)
{
	int pfd[2];
	if (output)
		*output = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return negative_errno();
	pid_t pid = fork();
	if (pid < 0) {
		int e = negative_errno();
		close(pfd[0]);
		close(pfd[1]);
		return e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		/* nothing of ours past the exec (a directory left open would lead out of a chroot) */
		(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		if (setup && setup(data) < 0)
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		char tmp[4096];
		ssize_t k = read(pfd[0], tmp, sizeof(tmp));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (!buf)
			continue;
		if (n + (size_t)k > cap) { /* keep the tail */
			size_t drop = n + (size_t)k - cap;
			if (drop > n)
				drop = n;
			memmove(buf, buf + drop, n - drop);
			n -= drop;
		}
		size_t take = (size_t)k > cap ? cap : (size_t)k;
		memcpy(buf + n, tmp + ((size_t)k - take), take);
		n += take;
	}
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(buf);
			return negative_errno();
		}
	if (buf) {
		buf[n] = '\0';
		if (output)
			*output = buf;
		else
			free(buf);
	}
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 127)
			return -ENOENT;
		return WEXITSTATUS(status);
	}
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

char *stune_last_line(const char *text)
{
	if (!text)
		return NULL;
	const char *end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
		end--;
	const char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	return end > start ? strndup(start, (size_t)(end - start)) : NULL;
}
