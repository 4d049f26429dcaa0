/* SPDX-License-Identifier: MIT */
/*
 * gdrmap doctor's parts: checks with a verdict and one line of advice,
 * facts read from sysfs (PCI placement, BARs, NICs, IOMMU, ACS), and the
 * backends tried one by one through the library.
 */
#ifndef GDRMAP_TOOLS_DOCTOR_H
#define GDRMAP_TOOLS_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/backend.h"
#include "checks.h"
#include "tools_cuda.h"
#include "diag/diag.h"
#include "json.h"

/* --- the system: sysfs, modules, the library in use (doctor_sys.c) --- */

#define MAX_CHAIN 16

struct pci_place {
	char bdf[16];			/* this function */
	char root[32];			/* host bridge, e.g. "pci0000:00" */
	char chain[MAX_CHAIN][16];	/* PCI functions from the root down,
					 * this one last */
	int depth;
	int numa;			/* -1: unknown */
	char cpus[256];			/* local_cpulist, "" if unreadable */
	bool known;			/* found in sysfs */
};

int pci_place(const char *bdf, struct pci_place *p);

/* The size and index of the BAR that maps video memory (BAR1 on NVIDIA
 * GPUs; the largest prefetchable one elsewhere, as on the simulated GPU);
 * 0 if unreadable. */
unsigned long long pci_vram_bar(const char *bdf, int *index);
/* BAR1's size as NVML reports it, 0 if NVML cannot tell (nvml.c). */
unsigned long long nvml_bar1_size(const char *busid);

/* nvidia-smi topo's names: X, PIX, PXB, PHB, NODE or SYS; "unknown"
 * when either is not in sysfs. */
const char *pci_relation(const struct pci_place *a, const struct pci_place *b);

struct nic {
	char name[64];			/* e.g. mlx5_0 */
	struct pci_place place;
};

#define MAX_NICS 32
int rdma_nics(struct nic *nics, int max);

bool module_loaded(const char *name);

/* The NVIDIA kernel driver's version (/sys/module/nvidia/version), or
 * why it is unknown. */
const char *nvidia_version(char *buf, size_t len);

/* The file libgdrapi was loaded from, its directory a real path (not
 * ".../tools/../lib", as the run path gives); "?" if unknown. */
const char *library_file(char *buf, size_t len);

/* IOMMU: whether any is active, and a function's group type
 * ("identity", "DMA", "DMA-FQ", ...; "" if unknown). */
bool iommu_active(void);
void iommu_group_type(const char *bdf, char *buf, size_t len);

/*
 * ACS on the bridges above bdf: 1 if some bridge redirects peer-to-peer
 * requests upstream (names it in where), 0 if none does, -1 if a bridge's
 * extended config space is not readable (root is needed).
 */
int acs_redirects(const struct pci_place *p, char *where, size_t len);

/* --- backends (doctor_backend.c) --- */

struct backend_probe {
	const char *name;
	bool usable;
	char why[4096];		/* the library's reason, if not usable */
	char fix[400];
	int drv_major, drv_minor;	/* gdr_driver_get_version */
	bool tested;		/* the self-test ran ... */
	bool test_ok;		/* ... and moved the right bytes */
	char test[320];		/* what it did or why it failed */
	/* cuMemAlloc memory on the first GPU: how this backend pins it. */
	enum { LEGACY_UNTRIED, LEGACY_MAPPED, LEGACY_COPY_ONLY,
	       LEGACY_REFUSED } legacy;
	double legacy_us;	/* copy-only: an 8-byte write, median */
	char legacy_why[320];	/* refused: the library's reason */
};

/* gdr_open as every program here calls it: with the environment as it is. */
struct default_open {
	bool ok;
	const char *backend;	/* the backend it chose; NULL if unknown */
	int err;		/* its errno when it failed */
	char why[4096];		/* ... and the library's reason */
	char env[192];		/* the variables that choose a backend, as
				 * set ("GDRMAP_BACKEND=x"), or "" */
	/* Where it failed with none set: the backend gdrmap_open takes,
	 * which gdr_open left out as partial (it maps only cuMemCreate
	 * memory); NULL otherwise. */
	const char *partial;
};

/*
 * gdr_open with the environment as it is (into def), then with each
 * backend forced in turn (GDRMAP_BACKEND), with the library's reason for
 * each refusal (gdrmap_last_error()); for each usable one, if CUDA works,
 * a pin/map/copy self-test on each of the ndevs devices devs, in that
 * device's context.  vulkan_causes: the names of the module-free
 * findings that are causes ("" if none), whose checks then carry the
 * vulkan backend's fixes.
 */
void probe_backends(struct backend_probe *bp, struct default_open *def,
		    const struct tcu *cu, const int *devs, int ndevs,
		    const char *vulkan_causes);

#define MAX_GPUS 16

/* --- the module-free checks and what can be pinned (doctor_module_free.c) --- */

struct mf {
	struct diag_report r;
	const struct diag_vk_dev *vkdevs;	/* Vulkan's devices ... */
	int nr_vkdevs;				/* ... -1: none enumerated */
	uint8_t cuda[MAX_GPUS][16];		/* CUDA's GPUs' UUIDs */
	int nr_cuda;
};

/* The library's diagnosis, run here, against CUDA's GPUs. */
void mf_diagnose(struct mf *m, const struct tcu *cu);
/* The names of the findings that are causes, comma-separated. */
void mf_cause_names(const struct mf *m, char *buf, size_t len);
/* One check per finding; a cause fails if must_work, else warns. */
void mf_checks(struct checks *cs, const struct mf *m, bool must_work);

/* Whether an allocator's memory can be pinned: 1, 0, -1 (no GPU). */
struct pinnable {
	int vmm_fd_module_free, vmm_fd_here;
	int cumemalloc_module_free, cumemalloc_here;
	/* The module-free backend gdrmap_open takes, or NULL. */
	const char *module_free;
	/* cuMemAlloc memory under the backend gdr_open picks: its probe. */
	const struct backend_probe *chosen;
};

struct gpu;
void pinnable(struct pinnable *p, const struct backend_probe *bp,
	      const struct gpu *gpus, int ng);
void pinnable_checks(struct checks *cs, const struct pinnable *p);
void mf_json(struct json *j, const struct mf *m, const struct pinnable *p);

/* --- the report (doctor.c gathers, doctor_json.c writes JSON) --- */

struct gpu {
	struct gpu_info info;
	struct pci_place place;
	unsigned long long bar;
	int bar_index;
	int rdma, rdma_vmm, dmabuf, vmm, posix_fd;
	char iommu_type[32];
};

struct report {
	const struct opts *o;
	const struct tcu *cu;
	const char *cuda_why;
	struct gpu *gpus;
	int ng;
	const struct nic *nics;
	int nn;
	const struct backend_probe *bp;
	const char *chosen;
	const struct default_open *def;
	const struct checks *cs;
	const struct mf *mf;
	const struct pinnable *pin;
	bool simulated;
};

void doctor_json(const struct report *r);

#endif /* GDRMAP_TOOLS_DOCTOR_H */
