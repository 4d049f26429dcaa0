// SPDX-License-Identifier: MIT
/*
 * doctor's JSON report: every fact it gathered and every check, in the
 * shape tools/README.md documents (unknown values null, never omitted).
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "affinity.h"
#include "tools_cuda.h"
#include "doctor.h"
#include "session.h"

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && (!strncmp(line, "model name", 10) ||
			      !strncmp(line, "Processor", 9))) {
			colon += 2;
			colon[strcspn(colon, "\n")] = 0;
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

/* The IOMMU-related words of the kernel command line. */
static void iommu_cmdline(char *buf, size_t len)
{
	char line[4096], *tok, *save = NULL;
	size_t used = 0;

	buf[0] = 0;
	if (read_line("/proc/cmdline", line, sizeof(line)))
		return;
	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save))
		if (strstr(tok, "iommu") && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? " " : "", tok);
}

static void json_gpus(struct json *j, const struct report *r)
{
	char cc[16], where[32];
	int i, acs;

	json_arr_begin(j, "gpus");
	for (i = 0; i < r->ng; i++) {
		const struct gpu *g = &r->gpus[i];

		json_obj_begin(j, NULL);
		json_int(j, "index", g->info.index);
		json_str(j, "name", g->info.name);
		json_bool(j, "simulated", g->info.simulated);
		json_str(j, "pci_bus_id", g->info.busid[0] ? g->info.busid : NULL);
		json_int(j, "numa_node", g->place.numa);
		json_str(j, "local_cpus", g->place.cpus[0] ? g->place.cpus : NULL);
		json_int(j, "memory_bytes", (long long)g->info.memory);
		if (g->bar) {
			json_int(j, "bar_index", g->bar_index);
			json_int(j, "bar_bytes", (long long)g->bar);
		} else {
			json_null(j, "bar_index");
			json_null(j, "bar_bytes");
		}
		snprintf(cc, sizeof(cc), "%d.%d", g->info.cc_major,
			 g->info.cc_minor);
		json_str(j, "compute_capability", cc);
		json_int(j, "rdma_supported", g->rdma);
		json_int(j, "rdma_with_vmm_supported", g->rdma_vmm);
		json_int(j, "dma_buf_supported", g->dmabuf);
		json_int(j, "vmm_supported", g->vmm);
		json_int(j, "posix_fd_supported", g->posix_fd);
		json_str(j, "iommu_group_type",
			 g->iommu_type[0] ? g->iommu_type : NULL);
		acs = g->place.known ?
		      acs_redirects(&g->place, where, sizeof(where)) : -2;
		json_str(j, "acs", acs > 0 ? "redirect" : acs == 0 ? "no-redirect" :
			 acs == -1 ? "unreadable" : NULL);
		json_str(j, "acs_redirect_at", acs > 0 ? where : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void doctor_json(const struct report *r)
{
	char buf[512], ver[16], path[4096];
	struct utsname u;
	struct json j;
	int i, k, counts[3] = { 0 }, maj = 0, min = 0;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_str(&j, "tool", "gdrmap");
	json_str(&j, "command", "doctor");
	json_str(&j, "version", GDRMAP_TOOLS_VERSION);
	json_bool(&j, "simulated", r->simulated);
	json_bool(&j, "gpu_present", r->cu != NULL);

	json_obj_begin(&j, "host");
	uname(&u);
	json_str(&j, "kernel", u.release);
	json_str(&j, "arch", u.machine);
	cpu_model(buf, sizeof(buf));
	json_str(&j, "cpu_model", buf);
	json_obj_end(&j);

	json_obj_begin(&j, "library");
	gdr_runtime_get_version(&maj, &min);
	snprintf(ver, sizeof(ver), "%d.%d", maj, min);
	json_str(&j, "api_version", ver);
	json_str(&j, "path", strcmp(library_file(path, sizeof(path)), "?") ?
			     path : NULL);
	json_obj_end(&j);

	json_obj_begin(&j, "cuda");
	json_bool(&j, "available", r->cu != NULL);
	json_str(&j, "nvidia_driver_version",
		 read_line("/sys/module/nvidia/version", buf, sizeof(buf)) ?
		 NULL : buf);
	if (r->cu) {
		json_int(&j, "driver_version", r->cu->driver_version);
		json_int(&j, "device_count", r->cu->device_count);
		json_null(&j, "error");
	} else {
		json_null(&j, "driver_version");
		json_int(&j, "device_count", 0);
		json_str(&j, "error", r->cuda_why);
	}
	json_obj_end(&j);

	json_gpus(&j, r);

	json_arr_begin(&j, "backends");
	for (i = 0; i < GDR_NR_BACKENDS; i++) {
		const struct backend_probe *b = &r->bp[i];

		json_obj_begin(&j, NULL);
		json_str(&j, "name", b->name);
		json_bool(&j, "usable", b->usable);
		json_str(&j, "reason", b->usable ? NULL : b->why);
		json_str(&j, "fix", b->usable ? NULL : b->fix);
		json_obj_begin(&j, "self_test");
		json_bool(&j, "ran", b->tested);
		json_bool(&j, "ok", b->test_ok);
		json_str(&j, "detail", b->tested ? b->test : NULL);
		json_obj_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_str(&j, "default_backend", r->chosen);
	json_str(&j, "default_backend_environment",
		 r->def->env[0] ? r->def->env : NULL);
	json_str(&j, "default_backend_error", r->def->ok ? NULL : r->def->why);
	json_str(&j, "gdrmap_open_backend",
		 r->def->ok ? r->chosen : r->def->partial);
	mf_json(&j, r->mf, r->pin);

	json_bool(&j, "nvidia_peermem_loaded", module_loaded("nvidia_peermem"));
	json_obj_begin(&j, "iommu");
	json_bool(&j, "active", iommu_active());
	iommu_cmdline(buf, sizeof(buf));
	json_str(&j, "cmdline", buf);
	json_obj_end(&j);

	json_arr_begin(&j, "nics");
	for (k = 0; k < r->nn; k++) {
		json_obj_begin(&j, NULL);
		json_str(&j, "name", r->nics[k].name);
		json_str(&j, "pci_bus_id", r->nics[k].place.bdf);
		json_int(&j, "numa_node", r->nics[k].place.numa);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "topology");
	for (i = 0; i < r->ng; i++)
		for (k = 0; k < r->nn; k++) {
			json_obj_begin(&j, NULL);
			json_int(&j, "gpu", r->gpus[i].info.index);
			json_str(&j, "nic", r->nics[k].name);
			json_str(&j, "relation",
				 pci_relation(&r->gpus[i].place,
					      &r->nics[k].place));
			json_obj_end(&j);
		}
	json_arr_end(&j);

	json_arr_begin(&j, "checks");
	for (i = 0; i < r->cs->n; i++) {
		const struct check *c = &r->cs->c[i];

		counts[c->v]++;
		json_obj_begin(&j, NULL);
		json_str(&j, "name", c->name);
		json_str(&j, "status", verdict_names[c->v]);
		json_str(&j, "message", c->msg);
		json_str(&j, "advice", c->advice[0] ? c->advice : NULL);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_begin(&j, "summary");
	json_int(&j, "ok", counts[V_OK]);
	json_int(&j, "warn", counts[V_WARN]);
	json_int(&j, "fail", counts[V_FAIL]);
	json_obj_end(&j);
	json_finish(&j);
}
