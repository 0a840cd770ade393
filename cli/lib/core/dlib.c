/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/dlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "core/strv.h"

static int open_lib(struct stune_dlib *l)
{
	/* RTLD_LOCAL: its symbols serve scsitune's pointers only. Never
	 * dlclose()d: OpenSSL and libraries that register atexit handlers do not
	 * support being unloaded. */
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(l->why, sizeof(l->why), "cannot load %s (Debian package %s): %s", l->soname, l->package,
			 dlerror());
		return -ENOPKG;
	}
	for (size_t i = 0; i < l->n; i++) {
		void *f = dlsym(h, l->names[i]);
		if (!f) {
			snprintf(l->why, sizeof(l->why), "%s has no %s (Debian package %s of another version?)",
				 l->soname, l->names[i], l->package);
			return -ENOPKG;
		}
		*(void **)((char *)l->api + l->offsets[i]) = f;
	}
	if (l->loaded)
		l->loaded();
	return 1;
}

int stune_dlib_load(struct stune_dlib *l, char **err)
{
	pthread_mutex_lock(&l->lock);
	if (!l->state)
		l->state = open_lib(l);
	int r = l->state;
	pthread_mutex_unlock(&l->lock);
	if (r > 0)
		return 0;
	return stune_errf(err, r, "%s", l->why);
}
