// SPDX-License-Identifier: MIT
/*
 * gdrmap doctor: what this machine has that gdrmap needs, each check with
 * a verdict (ok, warn, fail) and one line of advice.  It reads what it can
 * without root and without a GPU, and says what it could not read.
 * Exit status: 0 unless a check failed (1) or the usage was wrong (2).
 * A check fails where a GPU is here (CUDA's, or an NVIDIA GPU on the PCI
 * bus, as a container without its GPU sees) and something keeps gdrmap
 * from mapping its memory; with no GPU at all the same findings only
 * warn, so scripts can run it anywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "commands.h"
#include "tools_cuda.h"
#include "doctor.h"
#include "session.h"

static const char *human(unsigned long long b, char *buf, size_t len)
{
	if (b >= 1ULL << 30)
		snprintf(buf, len, "%.0f GiB", (double)b / (1ULL << 30));
	else
		snprintf(buf, len, "%.0f MiB", (double)b / (1ULL << 20));
	return buf;
}

static void gpu_facts(const struct tcu *cu, struct gpu *g)
{
	CUdevice d;

	pci_place(g->info.busid, &g->place);
	g->bar = g->info.busid[0] ? pci_vram_bar(g->info.busid, &g->bar_index) :
				    0;
	if (!g->bar && g->info.busid[0] &&
	    (g->bar = nvml_bar1_size(g->info.busid)))
		g->bar_index = 1;	/* sysfs hides it; NVML knows */
	if (!g->bar)
		g->bar_index = -1;
	iommu_group_type(g->info.busid, g->iommu_type, sizeof(g->iommu_type));
	if (cu->DeviceGet(&d, g->info.index) != CUDA_SUCCESS)
		return;
	cu->DeviceGetAttribute(&g->rdma,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, d);
	cu->DeviceGetAttribute(&g->rdma_vmm,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, d);
	cu->DeviceGetAttribute(&g->dmabuf,
		CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d);
	cu->DeviceGetAttribute(&g->vmm,
		CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d);
	cu->DeviceGetAttribute(&g->posix_fd,
		CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, d);
}

static void gpu_checks(struct checks *cs, const struct gpu *g)
{
	char name[48], a[32], b[32];

	snprintf(name, sizeof(name), "gpu%d", g->info.index);
	if (g->info.simulated)
		check_add(cs, name, V_WARN,
			  "no figure measured on it is performance data; run on a real GPU for those",
			  "%s at %s: a simulated GPU", g->info.name,
			  g->info.busid);
	else
		check_add(cs, name, V_OK, NULL,
			  "%s at %s, compute capability %d.%d, %s of memory, NUMA node %d, local CPUs %s",
			  g->info.name, g->info.busid[0] ? g->info.busid : "?",
			  g->info.cc_major, g->info.cc_minor,
			  human(g->info.memory, a, sizeof(a)), g->place.numa,
			  g->place.cpus[0] ? g->place.cpus : "unknown");

	snprintf(name, sizeof(name), "gpu%d bar", g->info.index);
	if (!g->bar)
		check_add(cs, name, V_WARN,
			  "read /sys/bus/pci/devices/<bus id>/resource, or nvidia-smi -q (BAR1 Memory Usage)",
			  "the BAR size is not readable from sysfs");
	else if (g->bar < g->info.memory)
		check_add(cs, name, V_WARN,
			  "enable Resizable BAR / Above 4G Decoding in the firmware: the module-free backends map through BAR1, and every backend maps at most BAR1 at once",
			  "BAR%d is %s, smaller than the %s of memory",
			  g->bar_index, human(g->bar, a, sizeof(a)),
			  human(g->info.memory, b, sizeof(b)));
	else
		check_add(cs, name, V_OK, NULL,
			  "BAR%d is %s and covers all %s of memory",
			  g->bar_index, human(g->bar, a, sizeof(a)),
			  human(g->info.memory, b, sizeof(b)));

	snprintf(name, sizeof(name), "gpu%d rdma", g->info.index);
	if (g->rdma)
		check_add(cs, name, V_OK, NULL,
			  "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 1 (with VMM memory: %d)",
			  g->rdma_vmm);
	else
		check_add(cs, name, V_WARN,
			  "gdrdrv cannot pin this GPU's memory (nvidia_p2p_get_pages); a module-free backend may still map it",
			  "CUDA says GPUDirect RDMA is not supported on this GPU");
}

/*
 * The first line of a reason, for one line of text (the JSON has all of
 * it): where that line only introduces the list below it ("...; what
 * stops it here:"), without the introduction.
 */
static int first_line(const char *why)
{
	int n = (int)strcspn(why, "\n"), k;

	if (!why[n] || n < 1 || why[n - 1] != ':')
		return n;
	for (k = n - 1; k > 0; k--)
		if (why[k] == ';')
			return k;
	return n - 1;
}

/* The summary: what gdr_open gives programs run here. */
static void default_check(struct checks *cs, const struct backend_probe *bp,
			  const struct default_open *def, bool gpu,
			  const char **chosen)
{
	const char *usable = NULL, *partial;
	int i;

	for (i = 0; i < GDR_NR_BACKENDS && !usable; i++)
		if (bp[i].usable)
			usable = bp[i].name;
	if (def->ok) {
		*chosen = def->backend ? def->backend : usable;
		if (def->env[0])
			check_add(cs, "backend", V_OK, NULL,
				  "gdr_open uses %s here, as %s asks",
				  *chosen ? *chosen : "a backend", def->env);
		else
			check_add(cs, "backend", V_OK, NULL,
				  "gdr_open uses %s here (GDRMAP_BACKEND=name forces another)",
				  *chosen ? *chosen : "a backend");
		return;
	}
	*chosen = NULL;
	partial = def->partial;
	if (partial) {
		/* GDRCopy's rule, on purpose (backend_select.c). */
		check_add(cs, "backend", V_OK,
			  "for every kind of memory mapped, load gdrdrv",
			  "gdr_open (the GDRCopy API: UCX, MPI, NCCL) steps aside here, as GDRCopy's library would: the one usable backend, %s, cannot map cudaMalloc memory.  gdrmap's command and Python package use it (gdrmap_open); GDRMAP_BACKEND=any gives it to programs that pin only memory they allocate with cuMemCreate (NCCL)",
			  partial);
		return;
	}
	if (def->env[0]) {
		char fix[400];

		/* A value that names no backend fails every program, GPU
		 * or not; a backend forced that cannot work, where a GPU is. */
		if (usable)
			snprintf(fix, sizeof(fix),
				 "unset it (gdr_open then uses %s), or force a usable backend",
				 usable);
		else
			snprintf(fix, sizeof(fix),
				 "unset it, or force gdrdrv, dmabuf, rm or vulkan; no backend is usable here either way (each backend's check says why)");
		check_add(cs, "backend", gpu || usable || def->err == EINVAL ?
			  V_FAIL : V_WARN, fix,
			  "gdr_open fails with %s in the environment: %.*s",
			  def->env, first_line(def->why), def->why);
	} else if (gpu) {
		check_add(cs, "backend", V_FAIL,
			  "load gdrdrv (on the host, passing /dev/gdrdrv in to a container), or mend what stops the rm backend (its check says)",
			  "no backend is usable: gdr_open fails on this machine");
	} else {
		check_add(cs, "backend", V_WARN,
			  "without a GPU there is nothing to map; the other checks say what a GPU would also need",
			  "no backend is usable (no GPU)");
	}
}

static void backend_checks(struct checks *cs, const struct backend_probe *bp,
			   const struct default_open *def, bool gpu,
			   const char **chosen)
{
	char name[48];
	int i;

	for (i = 0; i < GDR_NR_BACKENDS; i++) {
		const struct backend_probe *b = &bp[i];

		snprintf(name, sizeof(name), "backend %s", b->name);
		if (!b->usable) {
			check_add(cs, name, V_WARN, b->fix, "not usable: %.*s",
				  first_line(b->why), b->why);
			continue;
		}
		if (b->tested && !b->test_ok)
			check_add(cs, name, V_FAIL,
				  "this is a bug or a broken driver: rerun with GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1 and report it",
				  "opens, but the self-test failed: %s", b->test);
		else if (b->tested)
			check_add(cs, name, V_OK, NULL, "usable (API %d.%d): %s",
				  b->drv_major, b->drv_minor, b->test);
		else
			check_add(cs, name, V_OK, NULL,
				  "opens (API %d.%d); not tested: no GPU memory to map",
				  b->drv_major, b->drv_minor);
	}
	default_check(cs, bp, def, gpu, chosen);
}

static void system_checks(struct checks *cs, const struct gpu *gpus, int ng,
			  const struct nic *nics, int nn)
{
	char name[64], where[32];
	int i, k, r;

	if (module_loaded("nvidia_peermem"))
		check_add(cs, "nvidia_peermem", V_OK, NULL,
			  "loaded: RDMA NICs can register GPU memory");
	else if (nn)
		check_add(cs, "nvidia_peermem", V_WARN,
			  "sudo modprobe nvidia-peermem, or have the RDMA stack register GPU memory as dma-buf",
			  "not loaded: NICs cannot register GPU memory through it (GPUDirect RDMA)");
	else
		check_add(cs, "nvidia_peermem", V_OK, NULL,
			  "not loaded; not needed here (no RDMA NIC); CPU mappings never need it");

	if (!iommu_active())
		check_add(cs, "iommu", V_OK, NULL,
			  "no IOMMU is translating DMA (/sys/class/iommu is empty)");
	for (i = 0; i < ng && iommu_active(); i++) {
		const char *t = gpus[i].iommu_type;
		bool translating = t[0] && strcmp(t, "identity");

		snprintf(name, sizeof(name), "iommu gpu%d", gpus[i].info.index);
		if (translating && nn)
			check_add(cs, name, V_WARN,
				  "boot with iommu=pt (or intel_iommu=on iommu=pt) so NIC-to-GPU peer-to-peer is not remapped",
				  "the GPU's IOMMU group translates DMA (type %s): GPUDirect RDMA between NIC and GPU may fail or slow down",
				  t);
		else
			check_add(cs, name, V_OK, NULL,
				  "IOMMU active, GPU group type %s; CPU mappings do not go through the IOMMU",
				  t[0] ? t : "unknown");
	}

	if (!nn) {
		check_add(cs, "nics", V_OK, NULL,
			  "no RDMA NIC (/sys/class/infiniband is empty): topology and ACS do not matter for CPU mappings");
		return;
	}
	for (i = 0; i < ng; i++) {
		snprintf(name, sizeof(name), "acs gpu%d", gpus[i].info.index);
		r = gpus[i].place.known ?
		    acs_redirects(&gpus[i].place, where, sizeof(where)) : -1;
		if (r > 0)
			check_add(cs, name, V_WARN,
				  "disable ACS redirection on that bridge (setpci, or the firmware's ACS setting) for GPUDirect RDMA",
				  "bridge %s redirects peer-to-peer requests up to the root complex",
				  where);
		else if (r < 0)
			check_add(cs, name, V_WARN,
				  "run gdrmap doctor as root to read it",
				  "ACS above the GPU is not readable without root");
		else
			check_add(cs, name, V_OK, NULL,
				  "no bridge above the GPU redirects peer-to-peer requests");
		for (k = 0; k < nn; k++) {
			const char *rel = pci_relation(&gpus[i].place,
						       &nics[k].place);
			bool near = !strcmp(rel, "PIX") || !strcmp(rel, "PXB");

			snprintf(name, sizeof(name), "topo gpu%d %.24s",
				 gpus[i].info.index, nics[k].name);
			check_add(cs, name, near ? V_OK : V_WARN,
				  near ? NULL :
				  "for GPUDirect RDMA use a NIC under the same PCIe switch as the GPU (PIX or PXB)",
				  "%s: %s at %s", rel, nics[k].name,
				  nics[k].place.bdf);
		}
	}
}

/*
 * One line per check and per advice, which scripts grep; on a terminal,
 * wrapped to HELP_WIDTH columns for the eye.
 */
static void print_text(const struct checks *cs, bool simulated)
{
	bool tty = isatty(STDOUT_FILENO);
	int i;

	if (simulated)
		printf("*** SIMULATED GPU: not real hardware ***\n");
	for (i = 0; i < cs->n; i++) {
		const struct check *c = &cs->c[i];

		printf("[%-4s] %-22s ", verdict_names[c->v], c->name);
		if (tty)
			print_wrapped(stdout, 30, 30, c->msg);
		else
			printf("%s\n", c->msg);
		if (!c->advice[0])
			continue;
		printf("       %-22s -> ", "");
		if (tty)
			print_wrapped(stdout, 33, 33, c->advice);
		else
			printf("%s\n", c->advice);
	}
}

int cmd_doctor(int argc, char **argv)
{
	static struct checks cs;
	static struct gpu gpus[MAX_GPUS];
	static struct nic nics[MAX_NICS];
	static struct mf mf;
	struct backend_probe bp[GDR_NR_BACKENDS];
	static struct default_open def;
	struct pinnable pin;
	int devs[MAX_GPUS];
	struct report r;
	struct opts o;
	char why[512], err[256], nv[64], lib[4096], causes[128];
	const struct tcu *cu;
	int ret, i, first, last, ng = 0, nn, maj = 0, min = 0, fails = 0;
	bool gpu_here;

	ret = opts_parse(CMD_DOCTOR, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	memset(&r, 0, sizeof(r));
	cs.n = 0;

	gdr_runtime_get_version(&maj, &min);
	check_add(&cs, "library", V_OK, NULL, "libgdrapi API %d.%d from %s",
		  maj, min, library_file(lib, sizeof(lib)));

	cu = tcu_load(why, sizeof(why));
	mf_diagnose(&mf, cu);
	if (!cu && mf.r.gpu_pci[0]) {
		check_add(&cs, "cuda", V_FAIL,
			  "the nvidia devices, container and vulkan checks say why, each with its fix",
			  "an NVIDIA GPU is on the PCI bus at %s, but CUDA cannot use it (%s)",
			  mf.r.gpu_pci, why);
	} else if (!cu) {
		check_add(&cs, "cuda", V_WARN,
			  "the measuring commands need a GPU; the other checks still say what this machine has",
			  "%s", why);
	}
	if (!cu && o.device >= 0) {
		/* Asked about one GPU: say that it cannot be looked at. */
		check_add(&cs, "gpu", V_FAIL,
			  "run doctor without -d to see what this machine has",
			  "-d %d: there is no CUDA device %d here: CUDA cannot be used (the cuda check says why)",
			  o.device, o.device);
	} else if (cu) {
		check_add(&cs, "cuda", V_OK, NULL,
			  "NVIDIA driver %s, CUDA driver API %d.%d, %d GPU%s",
			  nvidia_version(nv, sizeof(nv)),
			  cu->driver_version / 1000,
			  cu->driver_version % 1000 / 10, cu->device_count,
			  cu->device_count == 1 ? "" : "s");
		first = o.device >= 0 ? o.device : 0;
		last = o.device >= 0 ? o.device : cu->device_count - 1;
		for (i = first; i <= last && ng < MAX_GPUS; i++) {
			if (tcu_device_info(cu, i, &gpus[ng].info, err,
					    sizeof(err))) {
				check_add(&cs, "gpu", V_FAIL,
					  "list the GPUs with nvidia-smi -L",
					  "%s", err);
				continue;
			}
			gpu_facts(cu, &gpus[ng]);
			r.simulated |= gpus[ng].info.simulated;
			gpu_checks(&cs, &gpus[ng]);
			ng++;
		}
	}
	nn = rdma_nics(nics, MAX_NICS);
	for (i = 0; i < ng; i++)
		devs[i] = gpus[i].info.index;
	mf_cause_names(&mf, causes, sizeof(causes));
	probe_backends(bp, &def, cu, devs, ng, causes);
	gpu_here = cu || mf.r.gpu_pci[0];
	backend_checks(&cs, bp, &def, gpu_here, &r.chosen);
	/* Each cause fails only where it leaves a GPU unusable. */
	mf_checks(&cs, &mf, gpu_here && !r.chosen);
	pinnable(&pin, bp, gpus, ng);
	pinnable_checks(&cs, &pin);
	system_checks(&cs, gpus, ng, nics, nn);

	r.o = &o;
	r.cu = cu;
	r.cuda_why = why;
	r.gpus = gpus;
	r.ng = ng;
	r.nics = nics;
	r.nn = nn;
	r.bp = bp;
	r.def = &def;
	r.cs = &cs;
	r.mf = &mf;
	r.pin = &pin;
	if (o.json)
		doctor_json(&r);
	else
		print_text(&cs, r.simulated);
	for (i = 0; i < cs.n; i++)
		fails += cs.c[i].v == V_FAIL;
	return fails ? 1 : 0;
}
