// SPDX-License-Identifier: MIT
/*
 * The diagnosis (diag.h): the order of its checks and the explanation
 * gdr_open gives.  The helpers its parts share are in diag_util.c.
 */
#include <string.h>

#include "diag_util.h"

const char *const diag_names[DIAG_NR] = {
	[DIAG_DEVICES] = "nvidia devices",
	[DIAG_CONTAINER] = "container",
	[DIAG_LOADER] = "vulkan loader",
	[DIAG_ICD] = "vulkan icd",
	[DIAG_ICD_LIB] = "vulkan icd library",
	[DIAG_VK_GPU] = "vulkan gpu",
};

void diag_run(const struct diag_env *env, struct diag_report *r)
{
	memset(r, 0, sizeof(*r));
	diag_detect_container(env, r);
	diag_check_devices(env, r);
	diag_check_loader(env, r);
	diag_check_manifests(env, r);
	diag_check_manifest_libs(r);
	/* Last: whether graphics matters depends on the driver loading. */
	diag_check_container(r);
	diag_set(r, DIAG_VK_GPU, DIAG_UNKNOWN, "not checked: no running Vulkan");
}

int diag_explain(const struct diag_report *r, char *buf, size_t len)
{
	int i, n = 0;

	for (i = 0; i < DIAG_NR; i++) {
		if (r->f[i].state != DIAG_BAD)
			continue;
		diag_cat(buf, len, "\n    - %s: %s", r->f[i].msg, r->f[i].fix);
		n++;
	}
	return n;
}

