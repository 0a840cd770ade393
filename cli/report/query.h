/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report --query: the fleet view from the central service, and --gate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

struct query_opts {
	const char *url;	/* --query */
	const char *api;	/* --query-api */
	const char *hosts_file; /* --hosts-file */
	const char *since;	/* --since */
	const char *gate;	/* --gate */
	double confidence;	/* --confidence, a fraction (STUNE_GATE_CONFIDENCE) */
	bool confidence_given;
	char **hosts; /* --hosts, split at ',' (NULL-terminated) */
	size_t n_hosts;
	long timeout_s;	  /* --query-timeout; 0: the settings file's, else 30 */
	const char *html; /* --html FILE (report's option, shared) */
};

/* --hosts LIST: appended to q->hosts. CLI_GO_ON to go on, else the exit code (usage error printed). */
int query_hosts_opt(struct query_opts *q, const char *arg);

/* The whole query: checks, ask, render, gate. Returns the exit code. */
int report_query(const struct global_opts *g, const struct query_opts *q, const char *phase, const char *compare,
		 const char *auth_file, const char *ca_file, long timeout_s);
