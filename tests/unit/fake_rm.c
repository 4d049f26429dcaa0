// SPDX-License-Identifier: MIT
/*
 * The fake nvidia.ko RM of the host tests (fake_rm.h says what it is for).
 *
 * Each rule below names what it models in NVIDIA's open-gpu-kernel-modules
 * (580.142); paths are shortened:
 *   nv.c         kernel-open/nvidia/nv.c
 *   nv-mmap.c    kernel-open/nvidia/nv-mmap.c
 *   nv-usermap.c kernel-open/nvidia/nv-usermap.c
 *   escape.c     src/nvidia/arch/nvalloc/unix/src/escape.c
 *   osapi.c      src/nvidia/arch/nvalloc/unix/src/osapi.c
 *   client.c     src/nvidia/src/kernel/rmapi/client.c
 *   mapping_cpu.c src/nvidia/src/kernel/rmapi/mapping_cpu.c
 *   rs_client.c, rs_server.c, rs_resource.c
 *                src/nvidia/src/libraries/resserv/src/
 *   client_resource.c, sharing.c, resource_list.h, param_copy.c
 *                src/nvidia/src/kernel/rmapi/
 *   mem.c        src/nvidia/src/kernel/mem_mgr/mem.c
 *   mem_ctrl.c   src/nvidia/src/kernel/gpu/mem_mgr/mem_ctrl.c
 *
 * | rule | models |
 * |---|---|
 * | an argument's size is _IOC_SIZE of the request; NV_ESC_IOCTL_XFER_CMD must be exactly nv_ioctl_xfer_t and names the real command, size and pointer | nvidia_ioctl (nv.c) |
 * | NV_ESC_CARD_INFO: control file only; -EINVAL unless the array holds every GPU | nvidia_ioctl, nvidia_read_card_info (nv.c) |
 * | NV_ESC_CHECK_VERSION_STR: control file only; -EINVAL unless exactly nv_ioctl_rm_api_version_t; CMD_QUERY copies the version string | nvidia_ioctl (nv.c), RmPerformVersionCheck (osapi.c) |
 * | NV_ESC_EXPORT_TO_DMABUF_FD: exactly its struct; a GPU's file only | nvidia_ioctl (nv.c) |
 * | every RM escape compares dataSize with its struct: -EINVAL | RmIoctl (escape.c) |
 * | RM_ALLOC (of these classes), RM_FREE, RM_CONTROL, RM_DUP_OBJECT, RM_MAP_MEMORY, RM_UNMAP_MEMORY: control file only, -EINVAL | RmIoctl, NV_CTL_DEVICE_ONLY (escape.c) |
 * | an RM call that fails answers in its status; the ioctl succeeds | RmIoctl (escape.c), nvidia_ioctl (nv.c) |
 * | NV_ESC_REGISTER_FD: once per file (NV_ERR_INVALID_STATE); ctl_fd must be a control file, not the file itself, not one that is itself registered (NV_ERR_INVALID_ARGUMENT); all -EINVAL | RmIoctl NV_ESC_REGISTER_FD (escape.c) |
 * | a client is used only through the file it was made on: NV_ERR_INVALID_CLIENT | rmclientValidate, strict (client.c) |
 * | a client is used only by the process that made it: NV_ERR_INVALID_CLIENT (the driver checks this for maps, rm_create_mmap_context; the fake for every call, harsher) | rm_create_mmap_context (osapi.c) |
 * | NV01_ROOT, NV01_ROOT_NON_PRIV become NV01_ROOT_CLIENT; hObjectNew 0: RM picks the handle; a handle in use: NV_ERR_INSERT_DUPLICATE_NAME | RmIoctl NV_ESC_RM_ALLOC (escape.c), clientAssignResourceHandle (rs_server.c) |
 * | a device's parent is the client, a subdevice's a device: NV_ERR_INVALID_OBJECT_PARENT | resource_list.h |
 * | allocation parameters are optional for these classes; RM copies its own size of them (the fake wants paramsSize to match, harsher): NV_ERR_INVALID_ARGUMENT | rmapiGetClassAllocParamSize (resource_desc.c), rmapiParamsCopyInit (param_copy.c) |
 * | a device instance or GPU id RM does not have: NV_ERR_INVALID_ARGUMENT | deviceConstruct; NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2 |
 * | a control of another size than its parameters: NV_ERR_INVALID_PARAM_STRUCT; one the object does not have: NV_ERR_NOT_SUPPORTED | resControlLookup (rs_resource.c) |
 * | GET_SURFACE_INFO PHYS_SIZE: the physical size in 4 KiB units; an unknown index: NV_ERR_INVALID_ARGUMENT | memCtrlCmdGetSurfaceInfoLvm (mem_ctrl.c) |
 * | dup: a missing source object: NV_ERR_OBJECT_NOT_FOUND; a source client of another process: refused (share policy RS_SHARE_TYPE_PID), NV_ERR_INSUFFICIENT_PERMISSIONS | serverCopyResource (rs_server.c), clientCopyResource (rs_client.c), cliresShareCallback (client_resource.c), serverInitGlobalSharePolicies (sharing.c) |
 * | dup: the new object's parent must be a device; memory of another GPU than the device's is refused (harsher: NV_ERR_INVALID_DEVICE) | memCopyConstruct, memCheckCopyPermissions (mem.c) |
 * | the duplicate holds the memory until it is freed | memCopyConstruct (mem.c: the same memory descriptor) |
 * | freeing an object frees what lies under it; freeing the client frees all; closing the control file frees the clients made on it | serverFreeResourceTree (rs_server.c), RmFreeUnusedClients (osapi.c) |
 * | RM_MAP_MEMORY clears the caller's caching type | RmIoctl NV_ESC_RM_MAP_MEMORY (escape.c) |
 * | map: offset >= length: NV_ERR_INVALID_BASE; length 0 or offset + length > length: NV_ERR_INVALID_LIMIT | memMap_IMPL (mapping_cpu.c) |
 * | map: the mapping is recorded on the file named by fd, a GPU file of the memory's GPU (NV_ERR_INVALID_ARGUMENT); a file takes one mapping in its life: NV_ERR_STATE_IN_USE; on failure RM undoes the mapping | nv_add_mapping_context_to_file (nv-usermap.c), RmIoctl (escape.c) |
 * | map: the fd must be registered to the client's control file (harsher: nvidia.ko does not check it, libcuda always registers): NV_ERR_INVALID_ARGUMENT | - |
 * | map: offset and length are widened to whole pages | nv_align_mmap_offset_length (RmCreateMmapContextLocked, osapi.c) |
 * | mmap of a GPU file without a mapping context: -EINVAL; at an offset other than 0: -EINVAL; of another length than the mapping's: -ENXIO | nvidia_mmap_helper (nv-mmap.c) |
 * | unmap of a mapping RM has no record of: NV_ERR_OBJECT_NOT_FOUND | serverUnmap (rs_server.c) |
 * | a control file cannot be mmap'ed for video memory (the fake refuses any mmap of it), and MAP_PRIVATE of a GPU file is refused (harsher) | nvidia_mmap_helper (nv-mmap.c) |
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/backend.h"
#include "base/cuda_syms.h"
#include "fake_rm.h"

const char *fake_rm_version;
int fake_rm_ctl_errno;
int fake_rm_dev_errno;
uint32_t fake_rm_dup_status;
uint32_t fake_rm_map_status;
int fake_rm_map_skip;
uint32_t fake_rm_size_status;
size_t fake_rm_export_size;
int fake_rm_export_unready;
void (*fake_rm_after_export)(CUdeviceptr va, uint64_t len);

/* nv-ioctl-numbers.h, nvos.h, nvstatuscodes.h: what rm_abi.h leaves out. */
#define NV_ABSOLUTE_MAX_IOCTL_SIZE	16384
#define NV01_ROOT			0x00000000u
#define NV01_ROOT_NON_PRIV		0x00000001u
#define NV_RM_API_VERSION_REPLY_RECOGNIZED 1
#define NV_RM_API_VERSION_CMD_RELAXED	'1'
#define NVOS33_FLAGS_CACHING_TYPE_MASK	(7u << 23)
#define NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_LO 2u
#define NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_HI 3u
#define NV_ERR_INSERT_DUPLICATE_NAME	0x19u
#define NV_ERR_INVALID_PARAM_STRUCT	0x3Au
#define NV_ERR_INVALID_STATE		0x40u

/* The cards in nvidia.ko's order: the CUDA device each is, its
 * /dev/nvidiaN minor and its RM device instance, all different. */
#define NCARDS FAKE_DEVS
static const int card_dev[NCARDS] = { 2, 0, 1 };
static const unsigned int card_minor[NCARDS] = { 7, 2, 0 };
static const uint32_t card_instance[NCARDS] = { 1, 2, 0 };

static uint32_t card_gpu_id(int c)
{
	int d = card_dev[c];

	return (uint32_t)(fake_pci_domain[d] << 16 | fake_pci_bus[d] << 8 |
			  fake_pci_slot[d] << 3);
}

static int card_of_dev(int dev)
{
	int c;

	for (c = 0; c < NCARDS; c++)
		if (card_dev[c] == dev)
			return c;
	return -1;
}

/* An open file of nvidia.ko: /dev/nvidiactl (card -1) or a GPU's. */
struct ffile {
	int used;
	int fd;			/* a real fd (of /dev/null): its number */
	uint64_t id;		/* never reused */
	int card;
	uint64_t reg;		/* NV_ESC_REGISTER_FD: the control file */
	pid_t opener;
	/* nv_add_mapping_context_to_file's mmap_context */
	int ctx_valid;
	int ctx_memfd;
	uint64_t ctx_off, ctx_len;
};

enum { OBJ_CLIENT = 1, OBJ_DEVICE, OBJ_SUBDEVICE, OBJ_MEMORY };

/* An object of one of the library's clients. */
struct fobj {
	int used;
	int kind;
	uint32_t client, handle, parent;
	int card;
	uint64_t file;		/* client: the file it was made on */
	pid_t pid;		/* client: the process that made it */
	int memfd;		/* memory: its own reference */
	uint64_t length;
};

/* A CPU mapping RM has on record (NVOS33 until NVOS34). */
struct fmap {
	int used;
	uint32_t client, device, memory;
	uint64_t cookie;
};

/* Address space mapped through the table and not unmapped yet. */
struct frange {
	int used;
	uintptr_t start;
	size_t len;
};

#define NFILES	256
#define NOBJS	4096
#define NMAPS	2048
#define NRANGES	2048

static pthread_mutex_t fr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ffile files[NFILES];
static struct fobj objs[NOBJS];
static struct fmap maps[NMAPS];
static struct frange ranges[NRANGES];
static uint64_t next_file_id = 1;
static uint32_t next_client = 0xc1e00001;
static uint32_t next_rm_handle = 0xbe000001;
static uint64_t next_cookie = 0x3800000000ULL;
static struct {
	pid_t pid;
	uint32_t handle;
} cuda_clients[16];
static uint32_t next_cuda_client = 0xc1d00001;
static int n_exports, n_dups, n_maps, n_refused, n_foreign;
static char last_refusal[256];

/* --- files --- */

static struct ffile *file_of(int fd)
{
	int i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < NFILES; i++)
		if (files[i].used && files[i].fd == fd)
			return &files[i];
	return NULL;
}

/* An errno nvidia.ko answers before RM sees the request. */
__attribute__((format(printf, 2, 3)))
static int refuse(int err, const char *fmt, ...)
{
	va_list ap;

	n_refused++;
	va_start(ap, fmt);
	vsnprintf(last_refusal, sizeof(last_refusal), fmt, ap);
	va_end(ap);
	return err;
}

/* --- objects --- */

static struct fobj *obj_find(uint32_t client, uint32_t handle)
{
	int i;

	for (i = 0; i < NOBJS; i++)
		if (objs[i].used && objs[i].client == client &&
		    objs[i].handle == handle)
			return &objs[i];
	return NULL;
}

static struct fobj *obj_new(int kind, uint32_t client, uint32_t handle,
			    uint32_t parent, int card)
{
	int i;

	for (i = 0; i < NOBJS; i++) {
		if (objs[i].used)
			continue;
		memset(&objs[i], 0, sizeof(objs[i]));
		objs[i].used = 1;
		objs[i].kind = kind;
		objs[i].client = client;
		objs[i].handle = handle;
		objs[i].parent = parent;
		objs[i].card = card;
		objs[i].memfd = -1;
		return &objs[i];
	}
	return NULL;
}

/* Free o and everything under it (serverFreeResourceTree), and the
 * mappings RM has of freed memory. */
static void obj_free(struct fobj *o)
{
	int i;

	for (i = 0; i < NOBJS; i++)
		if (objs[i].used && &objs[i] != o &&
		    objs[i].client == o->client &&
		    (objs[i].parent == o->handle || o->kind == OBJ_CLIENT))
			obj_free(&objs[i]);
	for (i = 0; i < NMAPS; i++)
		if (maps[i].used && maps[i].client == o->client &&
		    (o->kind == OBJ_CLIENT || maps[i].memory == o->handle ||
		     maps[i].device == o->handle))
			maps[i].used = 0;
	if (o->memfd >= 0)
		close(o->memfd);
	o->used = 0;
}

/* The file a call on f acts for (escape.c: secInfo.clientOSInfo is the
 * registered control file, else the file itself). */
static uint64_t acting_file(const struct ffile *f)
{
	return f->reg ? f->reg : f->id;
}

/* The client h, used through f: NV_OK or why not (rmclientValidate,
 * rm_create_mmap_context). */
static uint32_t client_check(const struct ffile *f, uint32_t h,
			     struct fobj **out)
{
	struct fobj *c = obj_find(h, h);

	if (!c || c->kind != OBJ_CLIENT)
		return NV_ERR_INVALID_CLIENT;
	if (c->pid != getpid()) {
		n_foreign++;
		return NV_ERR_INVALID_CLIENT;
	}
	if (c->file != acting_file(f))
		return NV_ERR_INVALID_CLIENT;
	if (out)
		*out = c;
	return NV_OK;
}

/* libcuda's client of process pid, made when first asked for. */
static uint32_t cuda_client_of(pid_t pid)
{
	size_t i, n = sizeof(cuda_clients) / sizeof(cuda_clients[0]);

	for (i = 0; i < n; i++)
		if (cuda_clients[i].handle && cuda_clients[i].pid == pid)
			return cuda_clients[i].handle;
	for (i = 0; i < n; i++) {
		if (cuda_clients[i].handle)
			continue;
		cuda_clients[i].pid = pid;
		cuda_clients[i].handle = next_cuda_client++;
		return cuda_clients[i].handle;
	}
	return 0;
}

/* The process whose libcuda client h is, or 0. */
static pid_t cuda_client_pid(uint32_t h)
{
	size_t i;

	for (i = 0; i < sizeof(cuda_clients) / sizeof(cuda_clients[0]); i++)
		if (h && cuda_clients[i].handle == h)
			return cuda_clients[i].pid;
	return 0;
}

/* A new handle h (0: RM picks one) in client: NV_OK or why not. */
static uint32_t claim_handle(uint32_t client, uint32_t *h)
{
	if (!*h) {
		do
			*h = next_rm_handle++;
		while (obj_find(client, *h));
		return NV_OK;
	}
	return obj_find(client, *h) ? NV_ERR_INSERT_DUPLICATE_NAME : NV_OK;
}

/* --- RM calls --- */

static uint32_t rm_alloc(struct ffile *f, struct nvos21_alloc *a)
{
	void *params = (void *)(uintptr_t)a->pAllocParms;
	struct fobj *c, *parent, *o;
	uint32_t st, h = a->hObjectNew;
	int card;

	switch (a->hClass) {
	case NV01_ROOT:
	case NV01_ROOT_NON_PRIV:
	case NV01_ROOT_CLIENT:
		if (params && a->paramsSize != sizeof(uint32_t))
			return NV_ERR_INVALID_ARGUMENT;
		if (!h) {
			h = next_client++;
		} else if (obj_find(h, h)) {
			return NV_ERR_INSERT_DUPLICATE_NAME;
		}
		o = obj_new(OBJ_CLIENT, h, h, 0, -1);
		if (!o)
			return NV_ERR_INSUFFICIENT_RESOURCES;
		o->file = acting_file(f);
		o->pid = getpid();
		a->hObjectNew = h;
		return NV_OK;
	case NV01_DEVICE_0: {
		const struct nv0080_alloc *p = params;

		st = client_check(f, a->hRoot, &c);
		if (st != NV_OK)
			return st;
		if (a->hObjectParent != a->hRoot)
			return NV_ERR_INVALID_OBJECT_PARENT;
		if (p && a->paramsSize != sizeof(*p))
			return NV_ERR_INVALID_ARGUMENT;
		for (card = 0; card < NCARDS; card++)
			if (card_instance[card] == (p ? p->deviceId : 0))
				break;
		if (card == NCARDS)
			return NV_ERR_INVALID_ARGUMENT;
		st = claim_handle(a->hRoot, &h);
		if (st != NV_OK)
			return st;
		if (!obj_new(OBJ_DEVICE, a->hRoot, h, a->hRoot, card))
			return NV_ERR_INSUFFICIENT_RESOURCES;
		a->hObjectNew = h;
		return NV_OK;
	}
	case NV20_SUBDEVICE_0: {
		const struct nv2080_alloc *p = params;

		st = client_check(f, a->hRoot, &c);
		if (st != NV_OK)
			return st;
		parent = obj_find(a->hRoot, a->hObjectParent);
		if (!parent || parent->kind != OBJ_DEVICE)
			return NV_ERR_INVALID_OBJECT_PARENT;
		if (p && (a->paramsSize != sizeof(*p) || p->subDeviceId))
			return NV_ERR_INVALID_ARGUMENT;
		st = claim_handle(a->hRoot, &h);
		if (st != NV_OK)
			return st;
		if (!obj_new(OBJ_SUBDEVICE, a->hRoot, h, parent->handle,
			     parent->card))
			return NV_ERR_INSUFFICIENT_RESOURCES;
		a->hObjectNew = h;
		return NV_OK;
	}
	default:
		return NV_ERR_INVALID_CLASS;
	}
}

static uint32_t rm_free(struct ffile *f, const struct nvos00_free *p)
{
	struct fobj *c, *o;
	uint32_t st = client_check(f, p->hRoot, &c);

	if (st != NV_OK)
		return st;
	if (p->hObjectOld == p->hRoot) {
		obj_free(c);
		return NV_OK;
	}
	o = obj_find(p->hRoot, p->hObjectOld);
	if (!o)
		return NV_ERR_OBJECT_NOT_FOUND;
	/* The driver frees by handle alone; the fake wants the right
	 * parent too (harsher). */
	if (o->parent != p->hObjectParent)
		return NV_ERR_INVALID_OBJECT_PARENT;
	obj_free(o);
	return NV_OK;
}

static uint32_t rm_control(struct ffile *f, const struct nvos54_control *p)
{
	void *params = (void *)(uintptr_t)p->params;
	struct fobj *o;
	uint32_t st = client_check(f, p->hClient, NULL), i;

	if (st != NV_OK)
		return st;
	o = obj_find(p->hClient, p->hObject);
	if (!o)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (o->kind == OBJ_CLIENT &&
	    p->cmd == NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2) {
		struct nv0000_gpu_id_info_v2 *id = params;
		int c;

		if (p->paramsSize != sizeof(*id) || !id)
			return NV_ERR_INVALID_PARAM_STRUCT;
		for (c = 0; c < NCARDS; c++) {
			if (card_gpu_id(c) != id->gpuId)
				continue;
			id->deviceInstance = card_instance[c];
			id->subDeviceInstance = 0;
			id->gpuFlags = 0;
			id->sliStatus = 0;
			id->boardId = 0;
			id->gpuInstance = (uint32_t)c;
			id->numaId = -1;
			return NV_OK;
		}
		return NV_ERR_INVALID_ARGUMENT;
	}
	if (o->kind == OBJ_MEMORY &&
	    p->cmd == NV0041_CTRL_CMD_GET_SURFACE_INFO) {
		const uint64_t scale = NV0041_CTRL_SURFACE_INFO_PHYS_SIZE_SCALE;
		struct nv0041_get_surface_info *q = params;
		struct nv0041_surface_info *list;

		if (p->paramsSize != sizeof(*q) || !q)
			return NV_ERR_INVALID_PARAM_STRUCT;
		if (fake_rm_size_status)
			return fake_rm_size_status;
		list = (void *)(uintptr_t)q->surfaceInfoList;
		if (!q->surfaceInfoListSize || !list)
			return NV_OK;
		for (i = 0; i < q->surfaceInfoListSize; i++) {
			switch (list[i].index) {
			case NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE:
				list[i].data = (uint32_t)(o->length / scale);
				break;
			case NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_LO:
				list[i].data = (uint32_t)o->length;
				break;
			case NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_HI:
				list[i].data = (uint32_t)(o->length >> 32);
				break;
			default:
				st = NV_ERR_INVALID_ARGUMENT;
			}
		}
		return st;
	}
	return NV_ERR_NOT_SUPPORTED;
}

static uint32_t rm_dup(struct ffile *f, struct nvos55_dup *d)
{
	struct fobj *parent, *o;
	uint32_t st = client_check(f, d->hClient, NULL), h = d->hObject;
	pid_t src_pid = cuda_client_pid(d->hClientSrc);
	uint64_t len;
	int dev, memfd;

	if (st != NV_OK)
		return st;
	if (!src_pid)
		return NV_ERR_INVALID_CLIENT;
	if (src_pid != getpid()) {
		n_foreign++;
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	}
	parent = obj_find(d->hClient, d->hParent);
	if (!parent || parent->kind != OBJ_DEVICE)
		return NV_ERR_INVALID_OBJECT_PARENT;
	if (fake_cuda_rm_object(d->hObjectSrc, &dev, &memfd, &len))
		return NV_ERR_OBJECT_NOT_FOUND;
	st = fake_rm_dup_status;
	if (st == NV_OK && card_of_dev(dev) != parent->card)
		st = NV_ERR_INVALID_DEVICE;
	if (st == NV_OK)
		st = claim_handle(d->hClient, &h);
	if (st == NV_OK) {
		o = obj_new(OBJ_MEMORY, d->hClient, h, parent->handle,
			    parent->card);
		if (!o) {
			st = NV_ERR_INSUFFICIENT_RESOURCES;
		} else {
			o->memfd = memfd;
			o->length = len;
			d->hObject = h;
			n_dups++;
			return NV_OK;
		}
	}
	close(memfd);
	return st;
}

static uint64_t page_down(uint64_t v)
{
	return v & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
}

static uint64_t page_up(uint64_t v)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	return (v + pg - 1) & ~(pg - 1);
}

static uint32_t rm_map(struct ffile *f, struct nvos33_map_with_fd *m)
{
	struct nvos33_map *p = &m->params;
	struct fobj *dev, *mem;
	struct ffile *target;
	uint32_t st;
	int i;

	p->flags &= ~NVOS33_FLAGS_CACHING_TYPE_MASK;
	st = client_check(f, p->hClient, NULL);
	if (st != NV_OK)
		return st;
	dev = obj_find(p->hClient, p->hDevice);
	if (!dev || (dev->kind != OBJ_DEVICE && dev->kind != OBJ_SUBDEVICE))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	mem = obj_find(p->hClient, p->hMemory);
	if (!mem || mem->kind != OBJ_MEMORY)
		return NV_ERR_OBJECT_NOT_FOUND;
	/* Mapped through the device the memory is under (harsher). */
	if (mem->parent != (dev->kind == OBJ_DEVICE ? dev->handle :
			    dev->parent))
		return NV_ERR_INVALID_OBJECT_PARENT;
	if (fake_rm_map_status && fake_rm_map_skip-- <= 0)
		return fake_rm_map_status;
	if (p->offset >= mem->length)
		return NV_ERR_INVALID_BASE;
	if (!p->length || p->offset + p->length < p->offset ||
	    p->offset + p->length > mem->length)
		return NV_ERR_INVALID_LIMIT;
	/* rm_create_mmap_context, nv_add_mapping_context_to_file */
	target = file_of(m->fd);
	if (!target || target->card < 0 || target->card != mem->card)
		return NV_ERR_INVALID_ARGUMENT;
	if (target->reg != acting_file(f))
		return NV_ERR_INVALID_ARGUMENT;
	if (target->ctx_valid)
		return NV_ERR_STATE_IN_USE;
	for (i = 0; i < NMAPS && maps[i].used; i++)
		;
	if (i == NMAPS)
		return NV_ERR_INSUFFICIENT_RESOURCES;
	target->ctx_memfd = fcntl(mem->memfd, F_DUPFD_CLOEXEC, 0);
	if (target->ctx_memfd < 0)
		return NV_ERR_NO_MEMORY;
	target->ctx_valid = 1;
	target->ctx_off = page_down(p->offset);
	target->ctx_len = page_up(p->offset + p->length) - target->ctx_off;
	maps[i].used = 1;
	maps[i].client = p->hClient;
	maps[i].device = p->hDevice;
	maps[i].memory = p->hMemory;
	maps[i].cookie = next_cookie;
	next_cookie += 1ULL << 21;
	p->pLinearAddress = maps[i].cookie;
	n_maps++;
	return NV_OK;
}

static uint32_t rm_unmap(struct ffile *f, const struct nvos34_unmap *u)
{
	uint32_t st = client_check(f, u->hClient, NULL);
	int i;

	if (st != NV_OK)
		return st;
	for (i = 0; i < NMAPS; i++) {
		if (maps[i].used && maps[i].client == u->hClient &&
		    maps[i].device == u->hDevice &&
		    maps[i].memory == u->hMemory &&
		    maps[i].cookie == u->pLinearAddress) {
			maps[i].used = 0;
			return NV_OK;
		}
	}
	return NV_ERR_OBJECT_NOT_FOUND;
}

/* --- the ioctl --- */

static int escape_size(struct ffile *f, unsigned int nr, size_t size,
		       size_t want, const char *name)
{
	if (size != want)
		return refuse(EINVAL, "%s with an argument of %zu bytes, not %zu",
			      name, size, want);
	if (f->card >= 0)
		return refuse(EINVAL, "%s (0x%x) on a GPU's file, not /dev/nvidiactl",
			      name, nr);
	return 0;
}

/* nvidia_ioctl (nv.c) and RmIoctl (escape.c), with fr_lock held. */
static int dispatch(struct ffile *f, unsigned int nr, void *arg, size_t size)
{
	int err, i, n;

	switch (nr) {
	case NV_ESC_CARD_INFO: {
		struct nv_card_info *ci = arg;

		if (f->card >= 0)
			return refuse(EINVAL, "NV_ESC_CARD_INFO on a GPU's file");
		n = (int)(size / sizeof(*ci));
		memset(ci, 0, (size_t)n * sizeof(*ci));
		if (n < NCARDS)
			return refuse(EINVAL, "NV_ESC_CARD_INFO with room for %d of %d GPUs",
				      n, NCARDS);
		for (i = 0; i < NCARDS; i++) {
			int d = card_dev[i];

			ci[i].valid = 1;
			ci[i].pci_info.domain = (uint32_t)fake_pci_domain[d];
			ci[i].pci_info.bus = (uint8_t)fake_pci_bus[d];
			ci[i].pci_info.slot = (uint8_t)fake_pci_slot[d];
			ci[i].pci_info.vendor_id = 0x10de;
			ci[i].pci_info.device_id = 0x2330;
			ci[i].gpu_id = card_gpu_id(i);
			ci[i].minor_number = card_minor[i];
			ci[i].fb_size = 80ULL << 30;
		}
		return 0;
	}
	case NV_ESC_CHECK_VERSION_STR: {
		struct nv_rm_api_version *v = arg;
		const char *mine = fake_rm_version ? fake_rm_version :
				   FAKE_RM_VERSION;

		if (f->card >= 0)
			return refuse(EINVAL, "NV_ESC_CHECK_VERSION_STR on a GPU's file");
		if (size != sizeof(*v))
			return refuse(EINVAL, "NV_ESC_CHECK_VERSION_STR with %zu bytes",
				      size);
		v->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
		if (v->cmd == NV_RM_API_VERSION_CMD_QUERY) {
			snprintf(v->version, sizeof(v->version), "%s", mine);
			return 0;
		}
		n = v->cmd == NV_RM_API_VERSION_CMD_RELAXED ?
		    (int)strcspn(mine, ".") + 1 : (int)sizeof(v->version);
		if (!strncmp(v->version, mine, (size_t)n))
			return 0;
		snprintf(v->version, sizeof(v->version), "%s", mine);
		return EINVAL;
	}
	case NV_ESC_EXPORT_TO_DMABUF_FD: {
		struct nv_export_dmabuf *e = arg;

		if (size != sizeof(*e))
			return refuse(EINVAL, "NV_ESC_EXPORT_TO_DMABUF_FD with %zu bytes",
				      size);
		if (f->card < 0)
			return refuse(EINVAL, "NV_ESC_EXPORT_TO_DMABUF_FD on /dev/nvidiactl");
		/* The library exports through CUDA, never itself. */
		e->status = NV_ERR_NOT_SUPPORTED;
		return 0;
	}
	case NV_ESC_REGISTER_FD: {
		const struct nv_register_fd *r = arg;
		struct ffile *ctl;

		if (size != sizeof(*r))
			return refuse(EINVAL, "NV_ESC_REGISTER_FD with %zu bytes",
				      size);
		if (f->reg)
			return refuse(EINVAL, "NV_ESC_REGISTER_FD of a file registered already (NV_ERR_INVALID_STATE)");
		ctl = file_of(r->ctl_fd);
		if (!ctl || ctl->card >= 0)
			return refuse(EINVAL, "NV_ESC_REGISTER_FD with ctl_fd %d, not a /dev/nvidiactl file",
				      r->ctl_fd);
		if (ctl == f || ctl->reg)
			return refuse(EINVAL, "NV_ESC_REGISTER_FD to itself or to a registered file");
		f->reg = ctl->id;
		return 0;
	}
	case NV_ESC_RM_ALLOC: {
		struct nvos21_alloc *a = arg;

		err = escape_size(f, nr, size, sizeof(*a), "NV_ESC_RM_ALLOC");
		if (!err)
			a->status = rm_alloc(f, a);
		return err;
	}
	case NV_ESC_RM_FREE: {
		struct nvos00_free *p = arg;

		err = escape_size(f, nr, size, sizeof(*p), "NV_ESC_RM_FREE");
		if (!err)
			p->status = rm_free(f, p);
		return err;
	}
	case NV_ESC_RM_CONTROL: {
		struct nvos54_control *c = arg;

		err = escape_size(f, nr, size, sizeof(*c), "NV_ESC_RM_CONTROL");
		if (!err)
			c->status = rm_control(f, c);
		return err;
	}
	case NV_ESC_RM_DUP_OBJECT: {
		struct nvos55_dup *d = arg;

		err = escape_size(f, nr, size, sizeof(*d),
				  "NV_ESC_RM_DUP_OBJECT");
		if (!err)
			d->status = rm_dup(f, d);
		return err;
	}
	case NV_ESC_RM_MAP_MEMORY: {
		struct nvos33_map_with_fd *m = arg;

		err = escape_size(f, nr, size, sizeof(*m),
				  "NV_ESC_RM_MAP_MEMORY");
		if (!err)
			m->params.status = rm_map(f, m);
		return err;
	}
	case NV_ESC_RM_UNMAP_MEMORY: {
		struct nvos34_unmap *u = arg;

		err = escape_size(f, nr, size, sizeof(*u),
				  "NV_ESC_RM_UNMAP_MEMORY");
		if (!err)
			u->status = rm_unmap(f, u);
		return err;
	}
	default:
		return refuse(EINVAL, "unknown escape 0x%x", nr);
	}
}

static int fr_ioctl(int fd, unsigned long req, void *arg)
{
	unsigned int nr = _IOC_NR(req);
	size_t size = _IOC_SIZE(req);
	struct ffile *f;
	int err;

	pthread_mutex_lock(&fr_lock);
	f = file_of(fd);
	if (!f || _IOC_TYPE(req) != NV_IOCTL_MAGIC) {
		err = refuse(ENOTTY, "ioctl 0x%lx on fd %d, not an nvidia.ko request on its file",
			     req, fd);
	} else if (nr == NV_ESC_IOCTL_XFER_CMD) {
		const struct nv_ioctl_xfer *x = arg;

		if (size != sizeof(*x))
			err = refuse(EINVAL, "NV_ESC_IOCTL_XFER_CMD of %zu bytes",
				     size);
		else if (x->size > NV_ABSOLUTE_MAX_IOCTL_SIZE)
			err = refuse(EINVAL, "NV_ESC_IOCTL_XFER_CMD of %u bytes",
				     x->size);
		else
			err = dispatch(f, x->cmd, (void *)(uintptr_t)x->ptr,
				       x->size);
	} else {
		err = dispatch(f, nr, arg, size);
	}
	pthread_mutex_unlock(&fr_lock);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* --- files and mappings --- */

static int fr_open(const char *path, int flags)
{
	unsigned int minor;
	int card = -1, fd, i;
	char tail;

	if (!strcmp(path, "/dev/nvidiactl")) {
		if (fake_rm_ctl_errno) {
			errno = fake_rm_ctl_errno;
			return -1;
		}
	} else if (sscanf(path, "/dev/nvidia%u%c", &minor, &tail) == 1) {
		for (card = 0; card < NCARDS; card++)
			if (card_minor[card] == minor)
				break;
		if (card == NCARDS || fake_rm_dev_errno) {
			errno = card == NCARDS ? ENOENT : fake_rm_dev_errno;
			return -1;
		}
	} else {
		errno = ENOENT;
		return -1;
	}
	fd = open("/dev/null", O_RDWR | (flags & O_CLOEXEC));
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&fr_lock);
	for (i = 0; i < NFILES && files[i].used; i++)
		;
	if (i == NFILES) {
		pthread_mutex_unlock(&fr_lock);
		close(fd);
		errno = EMFILE;
		return -1;
	}
	memset(&files[i], 0, sizeof(files[i]));
	files[i].used = 1;
	files[i].fd = fd;
	files[i].id = next_file_id++;
	files[i].card = card;
	files[i].opener = getpid();
	files[i].ctx_memfd = -1;
	pthread_mutex_unlock(&fr_lock);
	return fd;
}

static int fr_close(int fd)
{
	struct ffile *f;
	int i;

	pthread_mutex_lock(&fr_lock);
	f = file_of(fd);
	if (!f) {
		refuse(EBADF, "close of fd %d, not a file the table opened", fd);
		pthread_mutex_unlock(&fr_lock);
		errno = EBADF;
		return -1;
	}
	/* The last close of a control file frees the clients made on it
	 * (RmFreeUnusedClients, osapi.c); a fork child's close of the
	 * parent's file is not the last. */
	if (f->card < 0 && f->opener == getpid())
		for (i = 0; i < NOBJS; i++)
			if (objs[i].used && objs[i].kind == OBJ_CLIENT &&
			    objs[i].file == f->id)
				obj_free(&objs[i]);
	if (f->ctx_memfd >= 0)
		close(f->ctx_memfd);
	f->used = 0;
	pthread_mutex_unlock(&fr_lock);
	return close(fd);
}

/* Forget [a, +len) of the mapped ranges; fr_lock held. */
static void ranges_cut(uintptr_t a, size_t len)
{
	uintptr_t b = a + len;
	int i, j;

	for (i = 0; i < NRANGES; i++) {
		struct frange *r = &ranges[i];
		uintptr_t rs = r->start, re = r->start + r->len;

		if (!r->used || re <= a || rs >= b)
			continue;
		if (rs < a && re > b) {
			for (j = 0; j < NRANGES && ranges[j].used; j++)
				;
			if (j < NRANGES) {
				ranges[j].used = 1;
				ranges[j].start = b;
				ranges[j].len = re - b;
			}
			r->len = a - rs;
		} else if (rs < a) {
			r->len = a - rs;
		} else if (re > b) {
			r->start = b;
			r->len = re - b;
		} else {
			r->used = 0;
		}
	}
}

static void ranges_add(uintptr_t a, size_t len)
{
	int i;

	ranges_cut(a, len);
	for (i = 0; i < NRANGES; i++) {
		if (!ranges[i].used) {
			ranges[i].used = 1;
			ranges[i].start = a;
			ranges[i].len = len;
			return;
		}
	}
}

static void *fr_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off)
{
	struct ffile *f = NULL;
	void *p;
	int err = 0, memfd = -1;
	off_t at = 0;

	pthread_mutex_lock(&fr_lock);
	if (fd >= 0) {
		f = file_of(fd);
		if (!f)
			err = refuse(EBADF, "mmap of fd %d, not a file the table opened",
				     fd);
		else if (f->card < 0 || !f->ctx_valid)
			err = refuse(EINVAL, "mmap of a file with no mapping context (nvidia_mmap_helper: invalid mmap)");
		else if (off != 0)
			err = refuse(EINVAL, "mmap at offset %lld, not 0",
				     (long long)off);
		else if (len != f->ctx_len)
			err = refuse(ENXIO, "mmap of %zu bytes of a mapping of %llu",
				     len, (unsigned long long)f->ctx_len);
		else if (!(flags & MAP_SHARED))
			err = refuse(EINVAL, "a private mmap of a GPU's file");
		memfd = f && !err ? f->ctx_memfd : -1;
		at = f && !err ? (off_t)f->ctx_off : 0;
	}
	if (err) {
		pthread_mutex_unlock(&fr_lock);
		errno = err;
		return MAP_FAILED;
	}
	p = mmap(addr, len, prot, flags, memfd, at);
	if (p != MAP_FAILED)
		ranges_add((uintptr_t)p, len);
	pthread_mutex_unlock(&fr_lock);
	return p;
}

static int fr_munmap(void *addr, size_t len)
{
	int ret;

	pthread_mutex_lock(&fr_lock);
	ret = munmap(addr, len);
	if (!ret)
		ranges_cut((uintptr_t)addr, len);
	pthread_mutex_unlock(&fr_lock);
	return ret;
}

/* --- libcuda's export --- */

static int fr_export(const struct gdr_cuda_scope *s, uint64_t va,
		     uint64_t len, struct rm_export *out, char *why,
		     size_t why_len)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), off;
	const char *name = "";
	uint32_t handle;
	CUresult res;
	int dev;

	if (!s || !s->call) {
		snprintf(why, why_len, "export called outside a CUDA scope");
		return EINVAL;
	}
	if (fake_rm_export_size &&
	    fake_rm_export_size != sizeof(struct nv_export_dmabuf)) {
		/* What rm_capture.c says of a libcuda of another layout. */
		snprintf(why, why_len, "libcuda's dma-buf export argument is %zu bytes, not the %zu of the layout the library knows",
			 fake_rm_export_size, sizeof(struct nv_export_dmabuf));
		return EPROTO;
	}
	out->count = 0;
	res = va % pg || len % pg || !len ? CUDA_ERROR_INVALID_VALUE :
	      fake_cuda_rm_export(va, len, &dev, &handle, &off);
	if (res != CUDA_SUCCESS) {
		fake_GetErrorName(res, &name);
		snprintf(why, why_len, "CUDA does not export [0x%llx, +%llu) as a dma-buf: %s",
			 (unsigned long long)va, (unsigned long long)len, name);
		return GDR_PIN_UNMAPPABLE;
	}
	pthread_mutex_lock(&fr_lock);
	out->client = cuda_client_of(getpid());
	n_exports++;
	pthread_mutex_unlock(&fr_lock);
	if (rm_export_add(out, handle, off, len)) {
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	if (fake_rm_after_export)
		fake_rm_after_export(va, len);
	return 0;
}

static int fr_export_ready(char *why, size_t why_len)
{
	if (!fake_rm_export_unready)
		return 0;
	snprintf(why, why_len, "libcuda.so.1 is not loaded");
	return ENOTSUP;
}

const struct gdr_rm_os fake_rm_os = {
	.open = fr_open,
	.close = fr_close,
	.ioctl = fr_ioctl,
	.mmap = fr_mmap,
	.munmap = fr_munmap,
	.export = fr_export,
	.export_ready = fr_export_ready,
};

void fake_rm_install(void)
{
	gdr_cuda_use_syms(&fake_syms);
	gdr_rm_use_os(&fake_rm_os);
}

/* --- for the tests --- */

/* Whether client h was made by this process (a fork child sees the
 * parent's objects too); fr_lock held. */
static int ours(uint32_t h)
{
	struct fobj *c = obj_find(h, h);

	return c && c->pid == getpid();
}

void fake_rm_stats(struct fake_rm_stats *st)
{
	int i;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&fr_lock);
	for (i = 0; i < NOBJS; i++) {
		if (!objs[i].used || !ours(objs[i].client))
			continue;
		st->clients += objs[i].kind == OBJ_CLIENT;
		st->devices += objs[i].kind == OBJ_DEVICE;
		st->subdevices += objs[i].kind == OBJ_SUBDEVICE;
		st->dups += objs[i].kind == OBJ_MEMORY;
	}
	for (i = 0; i < NMAPS; i++)
		st->rm_maps += maps[i].used && ours(maps[i].client);
	for (i = 0; i < NRANGES; i++)
		st->cpu_bytes += ranges[i].used ? ranges[i].len : 0;
	for (i = 0; i < NFILES; i++)
		st->files += files[i].used;
	st->exports = n_exports;
	st->dups_made = n_dups;
	st->maps_made = n_maps;
	st->refused = n_refused;
	st->foreign = n_foreign;
	pthread_mutex_unlock(&fr_lock);
}

const char *fake_rm_last_refusal(void)
{
	return last_refusal;
}

int fake_rm_clients(uint32_t *handle, pid_t *pid, int max)
{
	int i, n = 0;

	pthread_mutex_lock(&fr_lock);
	for (i = 0; i < NOBJS; i++) {
		if (!objs[i].used || objs[i].kind != OBJ_CLIENT)
			continue;
		if (n < max) {
			handle[n] = objs[i].handle;
			pid[n] = objs[i].pid;
		}
		n++;
	}
	pthread_mutex_unlock(&fr_lock);
	return n;
}

uint32_t fake_rm_cuda_client(void)
{
	uint32_t h;

	pthread_mutex_lock(&fr_lock);
	h = cuda_client_of(getpid());
	pthread_mutex_unlock(&fr_lock);
	return h;
}

unsigned int fake_rm_minor(int dev)
{
	int c = card_of_dev(dev);

	return c < 0 ? ~0u : card_minor[c];
}
