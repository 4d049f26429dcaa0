// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: the device address spaces (simulated GPU, not real hardware).
 * Each open /dev/nvsim is one process's (struct nvsim_ctx): its handles
 * on memory objects, and its mappings, which place memory at device
 * virtual addresses that the process reserved in its own address space,
 * one address space for every GPU.  Everything belongs to the fd that
 * created it and goes when the fd is released.
 */
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "nvsim.h"
#include "nvsim_compat.h"

/* Every open /dev/nvsim; nvsim_lock. */
static LIST_HEAD(nvsim_ctxs);
static u64 nvsim_next_buffer_id = 1;
/* The last p2p token handed out; nvsim_lock. */
static u64 nvsim_last_p2p_token;

/* [va, va + size): non-empty, page aligned, no overflow, user addresses. */
bool nvsim_range_ok(u64 va, u64 size)
{
	return size && nvsim_aligned(va) && nvsim_aligned(size) &&
	       va + size > va && va + size <= TASK_SIZE_MAX;
}

/* Handles */

/* A handle on mem for ctx: a new one, or one more use of ctx's own. */
int nvsim_handle_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem, u32 *id)
{
	struct nvsim_handle *h;
	unsigned long idx;
	int ret;

	lockdep_assert_held(&nvsim_lock);
	xa_for_each(&ctx->handles, idx, h) {
		if (h->mem == mem) {
			h->refs++;
			*id = idx;
			return 0;
		}
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	ret = xa_alloc(&ctx->handles, id, h, xa_limit_31b, GFP_KERNEL);
	if (ret) {
		kfree(h);
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	h->mem = mem;
	h->refs = 1;
	mem->refs++;
	return 0;
}

int nvsim_handle_release(struct nvsim_ctx *ctx, u32 id)
{
	struct nvsim_handle *h;

	lockdep_assert_held(&nvsim_lock);
	h = xa_load(&ctx->handles, id);
	if (!h)
		return -ENOENT;
	if (--h->refs)
		return 0;
	xa_erase(&ctx->handles, id);
	nvsim_mem_put(h->mem);
	kfree(h);
	return 0;
}

/* The memory handle id of ctx names, or NULL. */
struct nvsim_mem *nvsim_handle_mem(struct nvsim_ctx *ctx, u32 id)
{
	struct nvsim_handle *h = xa_load(&ctx->handles, id);

	return h ? h->mem : NULL;
}

/* Mappings */

/* The mapping of ctx that holds all of [va, va + len), or NULL. */
struct nvsim_mapping *nvsim_find_map(struct nvsim_ctx *ctx, u64 va, u64 len)
{
	struct nvsim_mapping *map;

	lockdep_assert_held(&nvsim_lock);
	if (va + len < va)
		return NULL;
	list_for_each_entry(map, &ctx->maps, node) {
		if (va >= map->va && va - map->va < map->size)
			return map->size - (va - map->va) >= len ? map : NULL;
	}
	return NULL;
}

/* Does [va, va + size) overlap a mapping of any fd of this process? */
bool nvsim_overlaps(struct mm_struct *mm, u64 va, u64 size)
{
	struct nvsim_ctx *ctx;
	struct nvsim_mapping *map;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(ctx, &nvsim_ctxs, node) {
		if (ctx->mm != mm)
			continue;
		list_for_each_entry(map, &ctx->maps, node)
			if (va < map->va + map->size && map->va < va + size)
				return true;
	}
	return false;
}

int nvsim_map_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem,
		  u64 va, u64 size, u64 offset, u64 *buffer_id)
{
	struct nvsim_mapping *map, *pos;

	lockdep_assert_held(&nvsim_lock);
	if (!nvsim_range_ok(va, size) || !nvsim_aligned(offset) ||
	    offset >= mem->size || size > mem->size - offset)
		return -EINVAL;
	if (nvsim_overlaps(ctx->mm, va, size))
		return -EEXIST;

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return -ENOMEM;
	map->ctx = ctx;
	map->mem = mem;
	mem->refs++;
	map->va = va;
	map->size = size;
	map->offset = offset;
	map->buffer_id = nvsim_next_buffer_id++;
	INIT_LIST_HEAD(&map->pins);

	/* Keep ctx->maps sorted by address. */
	list_for_each_entry(pos, &ctx->maps, node)
		if (pos->va > va)
			break;
	list_add_tail(&map->node, &pos->node);

	mem->gpu->count.allocations++;
	*buffer_id = map->buffer_id;
	return 0;
}

static void nvsim_map_destroy(struct nvsim_mapping *map)
{
	lockdep_assert_held(&nvsim_lock);
	/* Invalidate non-persistent pins first, as RM does on free. */
	nvsim_fire_callbacks(map);
	list_del(&map->node);
	map->mem->gpu->count.allocations--;
	nvsim_mem_put(map->mem);
	kfree(map);
}

int nvsim_unmap_range(struct nvsim_ctx *ctx, u64 va, u64 size)
{
	struct nvsim_mapping *map, *tmp;
	bool found = false;

	lockdep_assert_held(&nvsim_lock);
	if (!size || va + size < va)
		return -EINVAL;
	/* Check first, then act: a partly covered mapping changes nothing. */
	list_for_each_entry(map, &ctx->maps, node) {
		if (va >= map->va + map->size || map->va >= va + size)
			continue;
		if (map->va < va || map->va + map->size > va + size)
			return -EINVAL;
		found = true;
	}
	if (!found)
		return -ENOENT;
	list_for_each_entry_safe(map, tmp, &ctx->maps, node)
		if (map->va >= va && map->va + map->size <= va + size)
			nvsim_map_destroy(map);
	return 0;
}

/* BAR address (kernel mapping) of device address va inside map. */
void __iomem *nvsim_map_io(struct nvsim_mapping *map, u64 va)
{
	u64 off = map->offset + (va - map->va);
	u64 page = map->mem->pages[off >> NVSIM_PAGE_SHIFT];

	return map->mem->gpu->bar + (page << NVSIM_PAGE_SHIFT) +
	       (off & (NVSIM_PAGE_BYTES - 1));
}

/* Address spaces */

/*
 * The mapping holding [va, va + len) in the address space named by the
 * tokens: 0/0 is the caller's own process (and the address spaces that
 * registered it), otherwise the /dev/nvsim fd that
 * CU_POINTER_ATTRIBUTE_P2P_TOKENS reported.
 */
struct nvsim_mapping *nvsim_lookup(u64 p2p_token, u32 va_space, u64 va,
				   u64 len)
{
	struct nvsim_mapping *map;
	struct nvsim_ctx *ctx;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(ctx, &nvsim_ctxs, node) {
		if (p2p_token || va_space) {
			if (ctx->p2p_token != p2p_token ||
			    ctx->va_space != va_space)
				continue;
		} else if ((!current->mm || ctx->mm != current->mm) &&
			   !nvsim_ctx_serves(ctx, task_tgid(current))) {
			continue;
		}
		map = nvsim_find_map(ctx, va, len);
		if (map)
			return map;
	}
	return NULL;
}

/*
 * Whether a token-0 get_pages or put_pages of thread group tgid looks in
 * ctx: its own, or one that registered it.  RM finds the third-party
 * object by the pids on its list (RmP2PGetInfoWithoutToken), which holds
 * its creator's and those that NV503C_CTRL_CMD_REGISTER_PID added.
 */
bool nvsim_ctx_serves(const struct nvsim_ctx *ctx, const struct pid *tgid)
{
	unsigned int i;

	lockdep_assert_held(&nvsim_lock);
	if (ctx->tgid == tgid)
		return true;
	for (i = 0; i < NVSIM_MAX_CLIENTS; i++)
		if (ctx->clients[i] && ctx->clients[i]->tgid == tgid)
			return true;
	return false;
}

/*
 * Registers with ctx the address space (the first open /dev/nvsim) of
 * process nr, as RM's REGISTER_PID registers the pid of a client's
 * process with a third-party object (CliAddThirdPartyP2PClientPid).
 */
int nvsim_register_client(struct nvsim_ctx *ctx, pid_t nr)
{
	struct nvsim_ctx *c, *client = NULL;
	struct pid *pid;
	unsigned int i;
	int ret = -ENOSPC;

	lockdep_assert_held(&nvsim_lock);
	pid = find_get_pid(nr);
	if (!pid)
		return -ESRCH;
	list_for_each_entry(c, &nvsim_ctxs, node) {
		if (c != ctx && c->tgid == pid) {
			client = c;
			break;
		}
	}
	put_pid(pid);
	if (!client)
		return -ESRCH;
	for (i = 0; i < NVSIM_MAX_CLIENTS; i++)
		if (ctx->clients[i] == client)
			return 0;
	for (i = 0; i < NVSIM_MAX_CLIENTS; i++) {
		if (!ctx->clients[i]) {
			ctx->clients[i] = client;
			ret = 0;
			break;
		}
	}
	return ret;
}

/*
 * A released address space leaves the lists it was registered on, as
 * RM's client free unregisters its pid (rmclientDestruct calls
 * CliUnregisterFromThirdPartyP2P).
 */
static void nvsim_unregister_client(struct nvsim_ctx *client)
{
	struct nvsim_ctx *ctx;
	unsigned int i;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(ctx, &nvsim_ctxs, node)
		for (i = 0; i < NVSIM_MAX_CLIENTS; i++)
			if (ctx->clients[i] == client)
				ctx->clients[i] = NULL;
}

/* Whether an open /dev/nvsim has this p2p token. */
bool nvsim_token_exists(u64 p2p_token)
{
	struct nvsim_ctx *ctx;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(ctx, &nvsim_ctxs, node)
		if (ctx->p2p_token == p2p_token)
			return true;
	return false;
}

/* The calling process's, empty; -ENODEV while there is no GPU. */
struct nvsim_ctx *nvsim_ctx_create(void)
{
	struct nvsim_ctx *ctx;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&ctx->maps);
	xa_init_flags(&ctx->handles, XA_FLAGS_ALLOC1);
	mmgrab(current->mm);
	ctx->mm = current->mm;
	ctx->tgid = get_pid(task_tgid(current));

	mutex_lock(&nvsim_lock);
	if (!nvsim_gpu_count()) {
		mutex_unlock(&nvsim_lock);
		put_pid(ctx->tgid);
		mmdrop(ctx->mm);
		kfree(ctx);
		return ERR_PTR(-ENODEV);
	}
	/*
	 * As guessable as the driver's: RM's thirdpartyp2pConstruct takes
	 * p2p tokens from one global counter, and CliAddThirdPartyP2PVASpace
	 * gives an object's first VA space 0xfe00.
	 */
	ctx->p2p_token = ++nvsim_last_p2p_token;
	ctx->va_space = 0xfe00;
	list_add_tail(&ctx->node, &nvsim_ctxs);
	mutex_unlock(&nvsim_lock);
	return ctx;
}

void nvsim_ctx_destroy(struct nvsim_ctx *ctx)
{
	struct nvsim_mapping *map, *tmp;
	struct nvsim_handle *h;
	unsigned long idx;

	mutex_lock(&nvsim_lock);
	/* First, as RM frees a client before its objects. */
	nvsim_unregister_client(ctx);
	/* As a real driver at context teardown: callbacks fire here. */
	list_for_each_entry_safe(map, tmp, &ctx->maps, node)
		nvsim_map_destroy(map);
	xa_for_each(&ctx->handles, idx, h) {
		nvsim_mem_put(h->mem);
		kfree(h);
	}
	xa_destroy(&ctx->handles);
	list_del(&ctx->node);
	mutex_unlock(&nvsim_lock);

	put_pid(ctx->tgid);
	mmdrop(ctx->mm);
	kfree(ctx);
}
