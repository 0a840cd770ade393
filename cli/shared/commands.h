/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The commands main() dispatches to: each command folder exports these two and nothing else. */
#pragma once

#include <stdio.h>

#include "cli.h"

int cmd_apply(struct global_opts *g, int argc, char **argv);
void help_apply(FILE *f);
int cmd_detect(struct global_opts *g, int argc, char **argv);
void help_detect(FILE *f);
int cmd_metrics(struct global_opts *g, int argc, char **argv);
void help_metrics(FILE *f);
int cmd_payload(struct global_opts *g, int argc, char **argv);
void help_payload(FILE *f);
int cmd_profile(struct global_opts *g, int argc, char **argv);
void help_profile(FILE *f);
int cmd_report(struct global_opts *g, int argc, char **argv);
void help_report(FILE *f);
int cmd_revert(struct global_opts *g, int argc, char **argv);
void help_revert(FILE *f);
int cmd_verify(struct global_opts *g, int argc, char **argv);
void help_verify(FILE *f);
