/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/fiorun.h"
#include "report/internal.h"
#include "core/strv.h"
#include "core/userfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A job file is a few lines; fio's own examples are under 10 KiB. */
#define STUNE_JOB_FILE_MAX_BYTES (1u << 20)

bool stune_fio_rw_writes(const char *rw)
{
	static const char *const reads[] = {"read", "randread"};
	for (size_t i = 0; i < ELEMENTSOF(reads); i++)
		if (!strcmp(rw, reads[i]))
			return false;
	return true; /* write, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, unknown */
}

int stune_fio_job_file_writes(const char *path, bool *writes, char **line)
{
	_cleanup_free_ char *text = NULL;
	/* A regular file only (a FIFO would block here, then again in fio). */
	int r = stune_read_user_file(path, STUNE_JOB_FILE_MAX_BYTES, STUNE_UF_TEXT, &text, NULL);
	if (r < 0)
		return r;
	*writes = false;
	for (char *next = text, *s; (s = strsep(&next, "\n"));) {
		while (isspace((unsigned char)*s))
			s++;
		const char *keys[] = {"rw", "readwrite"};
		for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
			size_t n = strlen(keys[i]);
			if (strncmp(s, keys[i], n) != 0)
				continue;
			char *v = s + n;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v != '=')
				continue;
			v++;
			while (*v == ' ' || *v == '\t')
				v++;
			v[strcspn(v, " \t\r\n:;#")] = '\0';
			if (stune_fio_rw_writes(v)) {
				*writes = true;
				s[strcspn(s, "\r\n")] = '\0';
				*line = strdup(s);
				return *line ? 0 : -ENOMEM;
			}
		}
	}
	return 0;
}

int stune_fio_find(const char *name, char **path)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0)
			return negative_errno();
		*path = strdup(name);
		return *path ? 0 : -ENOMEM;
	}
	const char *env = getenv("PATH");
	_cleanup_free_ char *dirs = strdup(env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
	if (!dirs)
		return -ENOMEM;
	char *save = NULL;
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *p = NULL;
		struct stat st;
		if (asprintf(&p, "%s/%s", *d ? d : ".", name) < 0)
			return -ENOMEM;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0) {
			*path = steal_pointer(&p);
			return 0;
		}
	}
	return -ENOENT;
}

int stune_fio_version(const char *fio, char **version)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	pid_t pid = fork();
	if (pid < 0) {
		int r = negative_errno();
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		dup2(fds[1], 1);
		execl(fio, fio, "--version", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	char buf[128];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof(buf) - 1 &&
	       ((k = read(fds[0], buf + n, sizeof(buf) - 1 - n)) > 0 || (k < 0 && errno == EINTR)))
		if (k > 0)
			n += (size_t)k;
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !*buf)
		return -ENOEXEC;
	*version = strdup(buf);
	return *version ? 0 : -ENOMEM;
}

/* Devices as fio's filename= takes them: ':' and '\\' escaped (fio splits on ':'), joined with ':'. */
static char *fio_filenames(char *const *devs, size_t n)
{
	char *files = NULL;
	size_t fsize = 0;
	FILE *f = open_memstream(&files, &fsize);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(':', f);
		for (const char *c = devs[i]; *c; c++) {
			if (*c == ':' || *c == '\\')
				fputc('\\', f);
			fputc(*c, f);
		}
	}
	if (fclose(f) != 0) {
		free(files);
		return NULL;
	}
	return files;
}

/*
 * The job from the options: one device, one section (--name=scsitune); several, the options global and
 * one section per device (--name=DEV --filename=DEV, numjobs jobs each), so that fio reports each
 * device's jobs apart and json+ gives their merged latency histograms (stune_fio_dev).
 */
static int job_argv(const struct stune_fio_spawn *s, char ***v, size_t *n)
{
	const struct stune_fio_job_opts *j = s->job;
	bool per_dev = s->n_devices > 1;
	int r = 0;
	if (!per_dev) {
		_cleanup_free_ char *files = fio_filenames(s->devices, s->n_devices);
		r = files ? stune_strv_push(v, n, strdup("--name=scsitune")) : -ENOMEM;
		if (!r)
			r = stune_strv_push(v, n, stune_strdupf("--filename=%s", files));
	}
	char *opts[] = {stune_strdupf("--rw=%s", j->rw),
			stune_strdupf("--bs=%s", j->bs),
			stune_strdupf("--iodepth=%u", j->iodepth),
			stune_strdupf("--numjobs=%u", j->numjobs),
			stune_strdupf("--runtime=%u", j->runtime_s),
			strdup("--time_based"),
			strdup("--direct=1"),
			strdup("--ioengine=libaio")};
	for (size_t i = 0; i < ELEMENTSOF(opts); i++)
		if (!r)
			r = stune_strv_push(v, n, opts[i]);
		else
			free(opts[i]);
	for (size_t i = 0; per_dev && !r && i < s->n_devices; i++) {
		_cleanup_free_ char *file = fio_filenames(&s->devices[i], 1);
		r = file ? stune_strv_push(v, n, stune_strdupf("--name=%s", s->devices[i])) : -ENOMEM;
		if (!r)
			r = stune_strv_push(v, n, stune_strdupf("--filename=%s", file));
	}
	return r;
}

int stune_fio_argv(const struct stune_fio_spawn *s, char ***argv)
{
	char **v = NULL;
	size_t n = 0;
	int r = 0;
	const struct stune_fio_job_opts *j = s->job;

	r = stune_strv_push(&v, &n, strdup(s->fio));
	if (!r)
		r = stune_strv_push(
		    &v, &n,
		    strdup(s->n_devices > 1 && !j->job_file ? "--output-format=json+" : "--output-format=json"));
	if (!r)
		r = stune_strv_push(&v, &n, stune_strdupf("--output=%s", s->output));
	if (!r && !j->destructive)
		r = stune_strv_push(&v, &n, strdup("--readonly"));
	if (!r && j->job_file) {
		r = stune_strv_push(&v, &n, strdup(j->job_file));
	} else if (!r) {
		r = job_argv(s, &v, &n);
	}
	if (r < 0) {
		stune_strv_free(v);
		return r;
	}
	*argv = v;
	return 0;
}

/* What the child reports through the close-on-exec pipe when it cannot exec fio. */
struct child_fail {
	int stage; /* 1 bind, 2 redirect, 3 exec */
	int err;
};

static void child_fail(int fd, int stage)
{
	struct child_fail f = {stage, errno};
	ssize_t w = write(fd, &f, sizeof(f));
	(void)w;
	_exit(127);
}

/* The first non-empty line of a file, or NULL. */
static char *first_line(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t size = 0;
	while (f && getline(&buf, &size, f) >= 0) {
		buf[strcspn(buf, "\r\n")] = '\0';
		if (*buf)
			return buf;
	}
	free(buf);
	return NULL;
}

int stune_fio_spawn_run(const struct stune_fio_spawn *s, char **err)
{
	_cleanup_(stune_strv_freep) char **argv = NULL;
	int r = stune_fio_argv(s, &argv);
	if (r < 0)
		return r;
	*err = NULL;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return negative_errno();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		r = negative_errno();
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		if (s->binder && (errno = -stune_numa_bind_self(s->binder, s->node)) != 0)
			child_fail(fds[1], 1);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int efd = open(s->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (null < 0 || efd < 0 || dup2(null, 0) < 0 || dup2(efd, 1) < 0 || dup2(efd, 2) < 0)
			child_fail(fds[1], 2);
		execv(argv[0], argv);
		child_fail(fds[1], 3);
	}
	close(fds[1]);
	struct child_fail cf = {0};
	ssize_t k;
	while ((k = read(fds[0], &cf, sizeof(cf))) < 0 && errno == EINTR)
		;
	close(fds[0]);

	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned last_tick = 0;
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return negative_errno();
		(void)poll(NULL, 0, 200);
		clock_gettime(CLOCK_MONOTONIC, &now);
		unsigned el = (unsigned)(now.tv_sec - t0.tv_sec);
		if (s->tick && el != last_tick) {
			last_tick = el;
			s->tick(s->tick_data, el);
		}
	}
	if (k == (ssize_t)sizeof(cf)) {
		static const char *const what[] = {"", "binding to NUMA node", "redirecting output", "starting"};
		if (asprintf(err, "%s %s: %s", what[cf.stage < 4 && cf.stage > 0 ? cf.stage : 0],
			     cf.stage == 1 ? "(numa_run_on_node)" : argv[0], strerror(cf.err)) < 0)
			*err = NULL;
		return cf.err > 0 ? -cf.err : -EIO;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	_cleanup_free_ char *line = first_line(s->stderr_path);
	if (WIFSIGNALED(status))
		r = asprintf(err, "fio killed by signal %d (%s)%s%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
			     line ? ": " : "", line ? line : "");
	else
		r = asprintf(err, "fio exited with status %d%s%s", WEXITSTATUS(status), line ? ": " : "",
			     line ? line : "");
	if (r < 0)
		*err = NULL;
	return -ECHILD;
}
