/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seconds since 1970 to a UTC calendar time without libc's time zone code:
 * glibc's gmtime_r() and strftime() run tzset() once, which reads the host's
 * /etc/localtime (under --sysroot too) for a time that is printed in UTC anyway.
 */
#pragma once

#include <stdint.h>

struct stune_utc {
	int year, month, day; /* month 1-12, day 1-31 */
	int hour, min, sec;
};

/* 0, or -ERANGE for a time before 1970 or from the year 10000 on. */
int stune_utc_from_epoch(int64_t sec, struct stune_utc *out);
