// SPDX-License-Identifier: MIT
/*
 * The library's RM client (rm_client.h), and every call it makes to
 * nvidia.ko.  The rules it follows are nvidia.ko's (open-gpu-kernel-
 * modules, the versions of rm_abi.h):
 *
 * - The client and its objects live on the /dev/nvidiactl file they were
 *   made on (RM checks the file of every call against the client's,
 *   rmclientValidate): one file of the library's own, close-on-exec.
 * - NV_ESC_CARD_INFO wants room for every GPU (nvidia_read_card_info);
 *   its gpu_id is what NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 turns into the
 *   deviceInstance an NV01_DEVICE_0 is made with.  The device file a
 *   mapping goes through is /dev/nvidia<minor_number>: on a host of
 *   several GPUs the two numbers differ, and the wrong file fails the map.
 * - NV_ESC_RM_MAP_MEMORY records the mapping on the /dev/nvidiaN file
 *   named in its argument, which must be registered to the client's file
 *   (NV_ESC_REGISTER_FD); the next mmap of that file at offset 0, of
 *   exactly the mapped length, gets it; a file takes one mapping in its
 *   life (nv_add_mapping_context_to_file refuses a second,
 *   NV_ERR_STATE_IN_USE).  So each mapping opens a file, registers it,
 *   maps, mmaps, and closes it (the mapping keeps what it needs).
 * - RM picks the caching of a CPU mapping of video memory itself (the
 *   escape clears the caller's choice): write-combined through BAR1.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/internal.h"
#include "base/log.h"
#include "rm_abi.h"
#include "rm_client.h"
#include "rm_os.h"

struct rm_gpu {
	struct nv_pci_info pci;
	uint32_t gpu_id;
	uint32_t minor;
	uint32_t device;	/* our handles; 0 until made */
	uint32_t subdevice;
};

static struct {
	unsigned int fork_gen;
	int made;
	int ctl;
	uint32_t client;
	char version[NV_RM_API_VERSION_STRING_LENGTH];
	int ngpus;
	struct rm_gpu gpu[NV_MAX_DEVICES];
	uint32_t next_handle;
} rm = { .ctl = -1 };
static pthread_mutex_t rm_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct {
	uint32_t status;
	const char *name;
} status_names[] = {
	{ NV_ERR_GPU_IS_LOST, "NV_ERR_GPU_IS_LOST" },
	{ NV_ERR_INSUFFICIENT_RESOURCES, "NV_ERR_INSUFFICIENT_RESOURCES" },
	{ NV_ERR_INSUFFICIENT_PERMISSIONS, "NV_ERR_INSUFFICIENT_PERMISSIONS" },
	{ NV_ERR_INVALID_ARGUMENT, "NV_ERR_INVALID_ARGUMENT" },
	{ NV_ERR_INVALID_BASE, "NV_ERR_INVALID_BASE" },
	{ NV_ERR_INVALID_CLASS, "NV_ERR_INVALID_CLASS" },
	{ NV_ERR_INVALID_CLIENT, "NV_ERR_INVALID_CLIENT" },
	{ NV_ERR_INVALID_DEVICE, "NV_ERR_INVALID_DEVICE" },
	{ NV_ERR_INVALID_LIMIT, "NV_ERR_INVALID_LIMIT" },
	{ NV_ERR_INVALID_OBJECT_HANDLE, "NV_ERR_INVALID_OBJECT_HANDLE" },
	{ NV_ERR_INVALID_OBJECT_PARENT, "NV_ERR_INVALID_OBJECT_PARENT" },
	{ NV_ERR_NO_MEMORY, "NV_ERR_NO_MEMORY" },
	{ NV_ERR_NOT_SUPPORTED, "NV_ERR_NOT_SUPPORTED" },
	{ NV_ERR_OBJECT_NOT_FOUND, "NV_ERR_OBJECT_NOT_FOUND" },
	{ NV_ERR_STATE_IN_USE, "NV_ERR_STATE_IN_USE" },
};

const char *gdr_rm_status(uint32_t status, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++) {
		if (status_names[i].status == status) {
			snprintf(buf, len, "%s (0x%x)", status_names[i].name,
				 status);
			return buf;
		}
	}
	snprintf(buf, len, "RM status 0x%x", status);
	return buf;
}

/* One ioctl; 0 or the errno. */
static int nv_ioctl(int fd, unsigned int nr, void *arg, size_t size)
{
	if (gdr_rm_os()->ioctl(fd, NV_IOCTL_REQ(nr, size), arg) == 0)
		return 0;
	return errno ? errno : EIO;
}

/* An ioctl whose RM answer is in *status: 0, or an errno with why. */
static int rm_call(int fd, unsigned int nr, void *arg, size_t size,
		   const uint32_t *status, const char *what, char *why,
		   size_t why_len)
{
	char st[64];
	int err = nv_ioctl(fd, nr, arg, size);

	if (err) {
		snprintf(why, why_len, "%s: nvidia.ko refused the request (%s): its interface differs from the one the library was written for",
			 what, strerror(err));
		return err;
	}
	if (*status != NV_OK) {
		snprintf(why, why_len, "%s: %s", what,
			 gdr_rm_status(*status, st, sizeof(st)));
		return *status == NV_ERR_INSUFFICIENT_PERMISSIONS ? EPERM :
		       *status == NV_ERR_NO_MEMORY ? ENOMEM : EINVAL;
	}
	return 0;
}

static int rm_alloc(uint32_t parent, uint32_t handle, uint32_t cls,
		    void *params, uint32_t size, uint32_t *out, char *why,
		    size_t why_len, const char *what)
{
	struct nvos21_alloc a = {
		.hRoot = rm.client,
		.hObjectParent = parent,
		.hObjectNew = handle,
		.hClass = cls,
		.pAllocParms = (uintptr_t)params,
		.paramsSize = size,
	};
	int err = rm_call(rm.ctl, NV_ESC_RM_ALLOC, &a, sizeof(a), &a.status,
			  what, why, why_len);

	if (!err && out)
		*out = a.hObjectNew;
	return err;
}

static int rm_control(uint32_t object, uint32_t cmd, void *params,
		      uint32_t size, char *why, size_t why_len,
		      const char *what)
{
	struct nvos54_control c = {
		.hClient = rm.client,
		.hObject = object,
		.cmd = cmd,
		.params = (uintptr_t)params,
		.paramsSize = size,
	};

	return rm_call(rm.ctl, NV_ESC_RM_CONTROL, &c, sizeof(c), &c.status,
		       what, why, why_len);
}

static void rm_free_object(uint32_t parent, uint32_t handle)
{
	struct nvos00_free f = {
		.hRoot = rm.client,
		.hObjectParent = parent,
		.hObjectOld = handle,
	};
	char why[160];

	if (rm_call(rm.ctl, NV_ESC_RM_FREE, &f, sizeof(f), &f.status,
		    "freeing an RM object", why, sizeof(why)))
		gdr_warn("%s", why);
}

/* "580.159.04" -> 580159004; 0 if it is not such a version. */
static unsigned long version_number(const char *v)
{
	unsigned int a = 0, b = 0, c = 0;

	if (sscanf(v, "%u.%u.%u", &a, &b, &c) < 2 || b > 999 || c > 999)
		return 0;
	return a * 1000000UL + b * 1000UL + c;
}

static int forced(void)
{
	const char *v = getenv("GDRMAP_BACKEND");

	return v && !strcmp(v, "rm");
}

static int check_version(char *why, size_t why_len)
{
	struct nv_rm_api_version q = { .cmd = NV_RM_API_VERSION_CMD_QUERY };
	unsigned long v;
	int err = nv_ioctl(rm.ctl, NV_ESC_CHECK_VERSION_STR, &q, sizeof(q));

	if (err) {
		snprintf(why, why_len, "nvidia.ko does not answer the version query (%s): a driver this library does not know",
			 strerror(err));
		return ENOTSUP;
	}
	q.version[sizeof(q.version) - 1] = '\0';
	snprintf(rm.version, sizeof(rm.version), "%s", q.version);
	v = version_number(rm.version);
	if (v >= RM_ABI_FIRST && v / 1000000 <= RM_ABI_LAST_MAJOR)
		return 0;
	if (forced()) {
		gdr_warn("driver %s is outside the versions whose RM interface the rm backend was checked against (%s); used anyway, as GDRMAP_BACKEND=rm asks",
			 rm.version, RM_ABI_RANGE_TEXT);
		return 0;
	}
	snprintf(why, why_len, "NVIDIA driver %s is outside the versions whose RM interface the rm backend was checked against (%s), and NVIDIA does not promise that interface to others: GDRMAP_BACKEND=rm uses it anyway, at your risk (nvidia.ko checks every argument's size, so a changed layout fails rather than misleads), or load gdrdrv",
		 rm.version, RM_ABI_RANGE_TEXT);
	return ENOTSUP;
}

static int read_cards(char *why, size_t why_len)
{
	struct nv_card_info *ci = calloc(NV_MAX_DEVICES, sizeof(*ci));
	int i, err;

	if (!ci) {
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	err = nv_ioctl(rm.ctl, NV_ESC_CARD_INFO, ci,
		       NV_MAX_DEVICES * sizeof(*ci));
	if (err) {
		snprintf(why, why_len, "nvidia.ko does not list its GPUs (NV_ESC_CARD_INFO: %s)",
			 strerror(err));
		free(ci);
		return err;
	}
	rm.ngpus = 0;
	for (i = 0; i < NV_MAX_DEVICES; i++) {
		struct rm_gpu *g = &rm.gpu[rm.ngpus];

		if (!ci[i].valid)
			continue;
		memset(g, 0, sizeof(*g));
		g->pci = ci[i].pci_info;
		g->gpu_id = ci[i].gpu_id;
		g->minor = ci[i].minor_number;
		rm.ngpus++;
	}
	free(ci);
	return 0;
}

/* Forget what a parent process made: its files stay the parent's. */
static void forget_parent(void)
{
	const struct gdr_rm_os *os = gdr_rm_os();

	if (rm.ctl >= 0)
		os->close(rm.ctl);
	memset(&rm, 0, sizeof(rm));
	rm.ctl = -1;
}

static int make_client(char *why, size_t why_len)
{
	const struct gdr_rm_os *os = gdr_rm_os();
	int err;

	rm.ctl = os->open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (rm.ctl < 0) {
		err = errno;
		snprintf(why, why_len, "/dev/nvidiactl: %s%s", strerror(err),
			 err == ENOENT ? " (no NVIDIA driver here, or a container started without the GPU's device files)" :
			 err == EACCES || err == EPERM ?
			 " (this user may not open the NVIDIA device files: CUDA cannot run here either)" :
			 "");
		return err == ENOENT ? ENODEV : err;
	}
	err = check_version(why, why_len);
	if (!err)
		err = rm_alloc(0, 0, NV01_ROOT_CLIENT, NULL, 0, &rm.client,
			       why, why_len, "allocating an RM client");
	if (!err)
		err = read_cards(why, why_len);
	if (err) {
		os->close(rm.ctl);
		rm.ctl = -1;
		rm.client = 0;
		return err;
	}
	rm.next_handle = 0xcafe0001;
	rm.made = 1;
	return 0;
}

int gdr_rm_client(char *why, size_t why_len)
{
	unsigned int gen = atomic_load(&gdr_fork_gen);
	int err = 0;

	pthread_mutex_lock(&rm_lock);
	if (rm.fork_gen != gen) {
		forget_parent();
		rm.fork_gen = gen;
	}
	if (!rm.made)
		err = make_client(why, why_len);
	pthread_mutex_unlock(&rm_lock);
	return err;
}

/* A handle for a new object of the client; rm_lock held. */
static uint32_t new_handle(void)
{
	return rm.next_handle++;
}

/* Make gpu's device and subdevice; rm_lock held. */
static int make_device(struct rm_gpu *g, char *why, size_t why_len)
{
	struct nv0000_gpu_id_info_v2 id = { .gpuId = g->gpu_id };
	struct nv0080_alloc dev = { 0 };
	struct nv2080_alloc sub = { 0 };
	uint32_t hdev = new_handle(), hsub = new_handle();
	int err;

	err = rm_control(rm.client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id,
			 sizeof(id), why, why_len,
			 "asking RM which device instance a GPU is");
	if (err)
		return err;
	dev.deviceId = id.deviceInstance;
	dev.hClientShare = rm.client;
	/* No VA space is needed: the client only maps for the CPU. */
	dev.vaMode = 2;	/* NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES */
	err = rm_alloc(rm.client, hdev, NV01_DEVICE_0, &dev, sizeof(dev),
		       NULL, why, why_len, "allocating an RM device");
	if (err)
		return err;
	sub.subDeviceId = id.subDeviceInstance;
	err = rm_alloc(hdev, hsub, NV20_SUBDEVICE_0, &sub, sizeof(sub), NULL,
		       why, why_len, "allocating an RM subdevice");
	if (err) {
		rm_free_object(rm.client, hdev);
		return err;
	}
	g->device = hdev;
	g->subdevice = hsub;
	return 0;
}

int gdr_rm_gpu(uint32_t domain, uint32_t bus, uint32_t device,
	       struct rm_gpu **gpu, char *why, size_t why_len)
{
	struct rm_gpu *g = NULL;
	int i, err = 0;

	err = gdr_rm_client(why, why_len);
	if (err)
		return err;
	pthread_mutex_lock(&rm_lock);
	for (i = 0; i < rm.ngpus; i++)
		if (rm.gpu[i].pci.domain == domain &&
		    rm.gpu[i].pci.bus == bus && rm.gpu[i].pci.slot == device)
			g = &rm.gpu[i];
	if (!g) {
		snprintf(why, why_len, "nvidia.ko lists no GPU at PCI %04x:%02x:%02x, where CUDA sees one",
			 domain, bus, device);
		err = ENODEV;
	} else if (!g->device) {
		err = make_device(g, why, why_len);
	}
	pthread_mutex_unlock(&rm_lock);
	if (!err)
		*gpu = g;
	return err;
}

int gdr_rm_dup(struct rm_gpu *gpu, uint32_t src_client, uint32_t src,
	       uint32_t *dup, char *why, size_t why_len)
{
	struct nvos55_dup d = {
		.hClient = rm.client,
		.hParent = gpu->device,
		.hClientSrc = src_client,
		.hObjectSrc = src,
	};
	int err;

	pthread_mutex_lock(&rm_lock);
	d.hObject = new_handle();
	pthread_mutex_unlock(&rm_lock);
	err = rm_call(rm.ctl, NV_ESC_RM_DUP_OBJECT, &d, sizeof(d), &d.status,
		      "duplicating CUDA's memory object into the library's RM client",
		      why, why_len);
	if (!err)
		*dup = d.hObject;
	return err;
}

void gdr_rm_free(struct rm_gpu *gpu, uint32_t handle)
{
	rm_free_object(gpu->device, handle);
}

int gdr_rm_object_size(uint32_t handle, uint64_t *size)
{
	struct nv0041_surface_info info = {
		.index = NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE,
	};
	struct nv0041_get_surface_info p = {
		.surfaceInfoListSize = 1,
		.surfaceInfoList = (uintptr_t)&info,
	};
	char why[160];
	int err;

	err = rm_control(handle, NV0041_CTRL_CMD_GET_SURFACE_INFO, &p,
			 sizeof(p), why, sizeof(why),
			 "asking RM a memory object's size");
	if (err) {
		gdr_dbg("%s", why);
		return err;
	}
	*size = (uint64_t)info.data * NV0041_CTRL_SURFACE_INFO_PHYS_SIZE_SCALE;
	return 0;
}

int gdr_rm_map(struct rm_gpu *gpu, uint32_t handle, uint64_t offset,
	       uint64_t len, void *at, uint64_t *cookie, char *why,
	       size_t why_len)
{
	const struct gdr_rm_os *os = gdr_rm_os();
	struct nvos33_map_with_fd m = {
		.params = {
			.hClient = rm.client,
			.hDevice = gpu->device,
			.hMemory = handle,
			.offset = offset,
			.length = len,
		},
	};
	struct nv_register_fd reg = { .ctl_fd = rm.ctl };
	char path[32];
	void *va;
	int fd, err;

	snprintf(path, sizeof(path), "/dev/nvidia%u", gpu->minor);
	fd = os->open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(why, why_len, "%s: %s (the GPU's device file; in a container, pass it in)",
			 path, strerror(err));
		return err;
	}
	err = nv_ioctl(fd, NV_ESC_REGISTER_FD, &reg, sizeof(reg));
	if (err) {
		snprintf(why, why_len, "registering %s with the library's RM client failed: %s",
			 path, strerror(err));
		goto close;
	}
	m.fd = fd;
	err = rm_call(rm.ctl, NV_ESC_RM_MAP_MEMORY, &m, sizeof(m),
		      &m.params.status,
		      "mapping GPU memory for the CPU (RM_MAP_MEMORY)", why,
		      why_len);
	if (err)
		goto close;
	va = os->mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		      fd, 0);
	if (va == MAP_FAILED) {
		err = errno;
		snprintf(why, why_len, "mmap of %s (%llu bytes) failed: %s",
			 path, (unsigned long long)len, strerror(err));
		gdr_rm_unmap(gpu, handle, m.params.pLinearAddress);
		goto close;
	}
	*cookie = m.params.pLinearAddress;
close:
	os->close(fd);
	return err;
}

void gdr_rm_unmap(struct rm_gpu *gpu, uint32_t handle, uint64_t cookie)
{
	struct nvos34_unmap u = {
		.hClient = rm.client,
		.hDevice = gpu->device,
		.hMemory = handle,
		.pLinearAddress = cookie,
	};
	char why[160];

	if (rm_call(rm.ctl, NV_ESC_RM_UNMAP_MEMORY, &u, sizeof(u), &u.status,
		    "unmapping GPU memory (RM_UNMAP_MEMORY)", why, sizeof(why)))
		gdr_warn("%s", why);
}
