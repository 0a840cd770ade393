/* SPDX-License-Identifier: GPL-2.0-or-later */
/* udev database files (run/udev/data/+pci:..., b8:0) read under --sysroot: the E: properties. */
#include <stdio.h>
#include <stdlib.h>

#include "core/ctx.h"
#include "detect/devices.h"
#include "fuzz.h"

static struct stune_ctx *ctx;
static char root[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	fuzz_write(root, "sys/devices/pci0000:00/0000:00:01.0/vendor", "0x1000\n", 7);
	fuzz_write(root, "run/udev/data/.keep", "", 0);
	fuzz_check(stune_ctx_new(root, &ctx) == 0, "a context on %s", root);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ctx)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_write(root, "run/udev/data/+pci:0000:00:01.0", data, size);
	struct stune_props props;
	if (stune_props_load(ctx, "sys/devices/pci0000:00/0000:00:01.0", "+pci:0000:00:01.0", &props) == 0) {
		static const char *const keys[] = {"ID_MODEL_FROM_DATABASE",
						   "ID_VENDOR_FROM_DATABASE",
						   "ID_PATH",
						   "ID_WWN",
						   "ID_SERIAL",
						   "DEVLINKS",
						   "",
						   "="};
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			(void)stune_props_get(&props, keys[i]);
		for (size_t i = 0; i < props.n; i++)
			fuzz_check(props.kv[i] != NULL, "property %zu is NULL", i);
		stune_props_clear(&props);
	}
	return 0;
}
