// SPDX-License-Identifier: MIT
/*
 * doctor's module-free checks: the library's own diagnosis (lib/diag/,
 * the archive libgdrdiag.a linked into the command as well, so the
 * findings and their words are the library's whichever libgdrapi.so.2 is
 * loaded)
 * made into one check per finding; and which allocators' memory this
 * machine can pin, with a module and without.
 */
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "backends/rm_abi.h"
#include "diag/vulkan_api.h"

void mf_diagnose(struct mf *m, const struct tcu *cu)
{
	static const struct diag_env here = { .root = "" };
	const char *vk_why;
	CUdevice dev;
	CUuuid u;
	int i;

	diag_run(&here, &m->r);
	if (m->r.f[DIAG_LOADER].state == DIAG_OK)
		gdr_vk_get(NULL, 0);
	m->nr_vkdevs = gdr_vk_devices(&m->vkdevs, &vk_why);
	m->nr_cuda = 0;
	for (i = 0; cu && cu->DeviceGetUuid && i < cu->device_count &&
	     m->nr_cuda < MAX_GPUS; i++)
		if (cu->DeviceGet(&dev, i) == CUDA_SUCCESS &&
		    cu->DeviceGetUuid(&u, dev) == CUDA_SUCCESS)
			memcpy(m->cuda[m->nr_cuda++], u.bytes, 16);
	diag_vk_gpu(&m->r, vk_why, m->vkdevs, m->nr_vkdevs,
		    (const uint8_t (*)[16])m->cuda, m->nr_cuda);
}

void mf_cause_names(const struct mf *m, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < DIAG_NR && used < len; i++)
		if (m->r.f[i].state == DIAG_BAD)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? ", " : "", diag_names[i]);
}

void mf_checks(struct checks *cs, const struct mf *m, bool must_work)
{
	int i;

	for (i = 0; i < DIAG_NR; i++) {
		const struct diag_finding *f = &m->r.f[i];

		if (f->state == DIAG_OK)
			check_add(cs, diag_names[i], V_OK, NULL, "%s", f->msg);
		else if (f->state == DIAG_BAD)
			check_add(cs, diag_names[i],
				  must_work ? V_FAIL : V_WARN, f->fix, "%s",
				  f->msg);
	}
}

/* Whether the backend of GDRMAP_ATTR_BACKEND value id opened (bp is in
 * the library's order, lib/base/backend.h). */
static bool opened(const struct backend_probe *bp, int id)
{
	int i;

	for (i = 0; i < GDR_NR_BACKENDS; i++)
		if (gdr_backend_at(i) == id)
			return bp[i].usable;
	return false;
}

/* -1 unknown (no GPU), else whether it holds. */
static int tri(bool known, bool v)
{
	return known ? v : -1;
}

void pinnable(struct pinnable *p, const struct backend_probe *bp,
	      const struct gpu *gpus, int ng)
{
	bool gdrdrv = opened(bp, GDRMAP_BACKEND_GDRDRV);
	bool dmabuf = opened(bp, GDRMAP_BACKEND_DMABUF);
	bool rm = opened(bp, GDRMAP_BACKEND_RM);
	bool vulkan = opened(bp, GDRMAP_BACKEND_VULKAN), fd = false;
	int i;

	for (i = 0; i < ng; i++)
		fd |= gpus[i].posix_fd;
	p->vmm_fd_module_free = tri(ng > 0, (vulkan && fd) || dmabuf || rm);
	p->vmm_fd_here = tri(ng > 0, p->vmm_fd_module_free || gdrdrv);
	p->cumemalloc_module_free = tri(ng > 0, dmabuf || rm);
	p->cumemalloc_here = tri(ng > 0, dmabuf || rm || gdrdrv);
	p->module_free = dmabuf ? "dmabuf" : rm ? "rm" : vulkan ? "vulkan" :
			 NULL;
	/* gdr_open's choice: the first that opens. */
	p->chosen = NULL;
	for (i = 0; i < GDR_NR_BACKENDS && !p->chosen; i++)
		if (bp[i].usable)
			p->chosen = &bp[i];
}

const char pinnable_frameworks[] =
	"gdrdrv and the rm backend map any CUDA memory (PyTorch's, CuPy's, cudaMalloc's); where only the vulkan backend serves, memory it maps: PyTorch with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, NCCL's buffers (cuMem, NCCL_CUMEM_ENABLE=1 by default, with GDRMAP_BACKEND=any), your own code with gdrmap_mem_alloc(3)";

static void vmm_check(struct checks *cs, const struct pinnable *p)
{
	if (p->vmm_fd_module_free)
		check_add(cs, "pin cuMemCreate", V_OK, NULL,
			  "cuMemCreate memory with the POSIX file descriptor handle type: pinnable without a module (%s backend)",
			  p->module_free);
	else if (p->vmm_fd_here)
		check_add(cs, "pin cuMemCreate", V_OK, NULL,
			  "cuMemCreate memory with the POSIX file descriptor handle type: pinnable through gdrdrv; not without a module here");
	else
		check_add(cs, "pin cuMemCreate", V_WARN,
			  "load gdrdrv, or mend what the rm backend's check names",
			  "cuMemCreate memory with the POSIX file descriptor handle type: not pinnable here");
}

static void cumemalloc_check(struct checks *cs, const struct pinnable *p)
{
	const struct backend_probe *b = p->chosen;

	if (b && b->legacy == LEGACY_COPY_ONLY)
		check_add(cs, "pin cuMemAlloc", V_OK, NULL,
			  "legacy cuMemAlloc memory: pinned copy-only by the %s backend (tried: 64 KiB both ways, checked): gdr_copy_* move its bytes by DMA, %.1f us for 8 bytes; a load or store through the pointer faults.  So gdr_open leaves this backend out (UCX and MPI run faster without gdr_copy than with a DMA per copy); for a CPU mapping load gdrdrv or allocate as the frameworks check says",
			  b->name, b->legacy_us);
	else if (b && b->legacy == LEGACY_REFUSED)
		check_add(cs, "pin cuMemAlloc", V_WARN,
			  getenv("GDRMAP_COPY_ONLY") ?
			  "unset GDRMAP_COPY_ONLY, load gdrdrv, or allocate as the frameworks check says" :
			  "load gdrdrv (sudo modprobe gdrdrv), or allocate as the frameworks check says",
			  "legacy cuMemAlloc memory: the %s backend refuses it: %s",
			  b->name, b->legacy_why);
	else if (p->cumemalloc_here)
		check_add(cs, "pin cuMemAlloc", V_OK, NULL,
			  "legacy cuMemAlloc memory: pinnable through %s%s",
			  p->cumemalloc_module_free ? "the " : "gdrdrv",
			  p->cumemalloc_module_free ?
			  (strcmp(p->module_free, "dmabuf") ?
			   "rm backend, without a module" :
			   "dmabuf backend, without a module") : "");
	else
		check_add(cs, "pin cuMemAlloc", V_WARN,
			  "load gdrdrv (sudo modprobe gdrdrv), or allocate as the frameworks check says",
			  "legacy cuMemAlloc memory: not pinnable here; gdrdrv, the rm backend (its check says what stops it) or a driver that lets the CPU mmap dma-bufs pins it");
}

void pinnable_checks(struct checks *cs, const struct pinnable *p)
{
	if (p->vmm_fd_here < 0) {
		check_add(cs, "pinnable", V_OK, NULL,
			  "no GPU: on one, any CUDA memory is mapped without a module by the rm backend (NVIDIA driver %s, open flavour), and by gdrdrv; the vulkan backend maps only cuMemCreate memory with the POSIX file descriptor handle type, and gdr_open takes it only when asked (GDRMAP_BACKEND=any)",
			  RM_ABI_RANGE_TEXT);
	} else {
		vmm_check(cs, p);
		cumemalloc_check(cs, p);
	}
	check_add(cs, "frameworks", V_OK, NULL, "%s", pinnable_frameworks);
}

static const char *const state_names[] = { "unknown", "ok", "bad" };

static void json_tri(struct json *j, const char *key, int v)
{
	if (v < 0)
		json_null(j, key);
	else
		json_bool(j, key, v);
}

void mf_json(struct json *j, const struct mf *m, const struct pinnable *p)
{
	const struct diag_report *r = &m->r;
	char id[41];
	int i, k;

	json_obj_begin(j, "module_free");
	json_obj_begin(j, "container");
	json_bool(j, "detected", r->container[0]);
	json_str(j, "signals", r->container[0] ? r->container : NULL);
	json_bool(j, "kubernetes", r->kubernetes);
	json_str(j, "nvidia_driver_capabilities", r->caps[0] ? r->caps : NULL);
	json_bool(j, "graphics", r->graphics);
	json_obj_end(j);
	json_str(j, "nvidia_pci_gpu", r->gpu_pci[0] ? r->gpu_pci : NULL);
	json_str(j, "icd_search_replaced_by",
		 r->icd_source[0] ? r->icd_source : NULL);
	json_arr_begin(j, "icd_searched");
	for (i = 0; i < r->nr_dirs; i++)
		json_str(j, NULL, r->dirs[i]);
	json_arr_end(j);
	json_arr_begin(j, "icd_manifests");
	for (i = 0; i < r->nr_icds; i++) {
		const struct diag_icd *icd = &r->icds[i];

		json_obj_begin(j, NULL);
		json_str(j, "path", icd->path);
		json_str(j, "library_path",
			 icd->library[0] ? icd->library : NULL);
		json_bool(j, "nvidia", icd->nvidia);
		json_tri(j, "loads", icd->loads == DIAG_UNKNOWN ? -1 :
			 icd->loads == DIAG_OK);
		json_str(j, "error", icd->error[0] ? icd->error : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "vulkan_devices");
	for (i = 0; i < m->nr_vkdevs; i++) {
		bool cuda = false;

		for (k = 0; k < m->nr_cuda; k++)
			cuda |= !memcmp(m->cuda[k], m->vkdevs[i].uuid, 16);
		diag_uuid_str(m->vkdevs[i].uuid, id);
		json_obj_begin(j, NULL);
		json_str(j, "name", m->vkdevs[i].name);
		json_str(j, "uuid", id);
		json_bool(j, "mappable", m->vkdevs[i].mappable);
		json_bool(j, "cuda", cuda);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "findings");
	for (i = 0; i < DIAG_NR; i++) {
		json_obj_begin(j, NULL);
		json_str(j, "name", diag_names[i]);
		json_str(j, "state", state_names[r->f[i].state]);
		json_str(j, "message", r->f[i].msg);
		json_str(j, "fix", r->f[i].fix[0] ? r->f[i].fix : NULL);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);

	json_obj_begin(j, "pinnable");
	json_obj_begin(j, "cumemcreate_posix_fd");
	json_tri(j, "without_module", p->vmm_fd_module_free);
	json_tri(j, "here", p->vmm_fd_here);
	json_obj_end(j);
	json_obj_begin(j, "cumemalloc");
	json_tri(j, "without_module", p->cumemalloc_module_free);
	json_tri(j, "here", p->cumemalloc_here);
	json_tri(j, "copy_only", !p->chosen || !p->chosen->legacy ? -1 :
		 p->chosen->legacy == LEGACY_COPY_ONLY);
	if (p->chosen && p->chosen->legacy == LEGACY_COPY_ONLY)
		json_num(j, "copy_only_write_8b_us", p->chosen->legacy_us);
	else
		json_null(j, "copy_only_write_8b_us");
	json_obj_end(j);
	json_str(j, "frameworks", pinnable_frameworks);
	json_obj_end(j);
}
