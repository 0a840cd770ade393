/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/utctime.h"

#include <errno.h>

int stune_utc_from_epoch(int64_t sec, struct stune_utc *out)
{
	if (sec < 0 || sec >= INT64_C(253402300800)) /* 10000-01-01T00:00:00Z */
		return -ERANGE;
	int64_t days = sec / 86400, rem = sec % 86400;
	/* Howard Hinnant's civil_from_days (proleptic Gregorian, eras of 400 years). */
	int64_t z = days + 719468;
	int64_t era = z / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int64_t d = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = yoe + era * 400 + (m <= 2);
	*out = (struct stune_utc){.year = (int)y,
				  .month = (int)m,
				  .day = (int)d,
				  .hour = (int)(rem / 3600),
				  .min = (int)(rem % 3600 / 60),
				  .sec = (int)(rem % 60)};
	return 0;
}
