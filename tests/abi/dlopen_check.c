// SPDX-License-Identifier: MIT
/*
 * Load the library the way its consumers do (NCCL: dlopen of libgdrapi.so;
 * NVSHMEM: of libgdrapi.so.2) and look up every symbol they use, including
 * GDRCopy's v1 gdr_get_info.  Internal symbols must not be visible.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "check.h"

static const char *const api[] = {
	"gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_pin_buffer_v2",
	"gdr_unpin_buffer", "gdr_get_callback_flag", "gdr_get_info",
	"gdr_get_info_v2", "gdr_map", "gdr_map_v2", "gdr_unmap",
	"gdr_copy_to_mapping", "gdr_copy_from_mapping",
	"gdr_runtime_get_version", "gdr_driver_get_version",
	"gdr_get_attribute", "gdr_get_mapping_type_string",
	"gdrmap_open", "gdrmap_mem_alloc", "gdrmap_mem_free",
	"gdrmap_copy_to_mapping", "gdrmap_copy_from_mapping",
	"gdrmap_copy_to_mapping_via", "gdrmap_copy_from_mapping_via",
	"gdrmap_copy_path", "gdrmap_copy_path_host", NULL,
};

static const char *const internal[] = {
	"gdr_open_backend", "gdr_region_alloc", "gdr_log", "gdr_copy_impls",
	"gdr_copy_for_type", "gdr_backend_gdrdrv", "gdr_msg", NULL,
};

int main(void)
{
	static const char *const names[] = { "libgdrapi.so", "libgdrapi.so.2" };
	unsigned int i;
	const char *const *s;

	for (i = 0; i < 2; i++) {
		void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		void (*get_version)(int *, int *);
		int major = 0, minor = 0;

		CHECK(lib != NULL, "dlopen(%s): %s", names[i], dlerror());
		if (!lib)
			continue;
		for (s = api; *s; s++)
			CHECK(dlsym(lib, *s) != NULL, "%s exports %s", names[i],
			      *s);
		for (s = internal; *s; s++)
			CHECK(dlsym(lib, *s) == NULL, "%s hides %s", names[i],
			      *s);
		*(void **)&get_version = dlsym(lib, "gdr_runtime_get_version");
		if (get_version) {
			get_version(&major, &minor);
			CHECK(major == 2 && minor >= 6, "runtime %d.%d", major,
			      minor);
		}
		dlclose(lib);
	}
	return test_done();
}
