// SPDX-License-Identifier: MIT
/*
 * RM objects that earlier pins found (rm_known.h): a small table for the
 * process, replaced round-robin when full.  A fork child starts empty:
 * its libcuda, if any, has other clients and handles.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "rm_client.h"
#include "rm_known.h"
#include "rm_window.h"

#define KNOWN_MAX 64

struct known_slot {
	const struct rm_gpu *gpu;	/* NULL: free */
	struct rm_known k;
	unsigned int next_witness;	/* replaced next when all are taken */
};

static struct known_slot slots[KNOWN_MAX];
static unsigned int next_slot, slots_gen;
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;

static int same(const struct known_slot *s, const struct rm_gpu *gpu,
		const struct rm_known *k)
{
	return s->gpu == gpu && s->k.client == k->client &&
	       s->k.src == k->src && s->k.va_base == k->va_base;
}

/* Empty the table in a fork child; known_lock held. */
static void check_gen(void)
{
	unsigned int gen = atomic_load(&gdr_fork_gen);
	unsigned int i;

	if (gen == slots_gen)
		return;
	for (i = 0; i < KNOWN_MAX; i++)
		slots[i].gpu = NULL;
	slots_gen = gen;
}

/* Witness w (ID id) joins slot s's: in a free place, or the oldest's. */
static void add_witness(struct known_slot *s, uint64_t w,
			unsigned long long id)
{
	unsigned int j, at = RM_WITNESSES;

	for (j = 0; j < RM_WITNESSES; j++) {
		if (s->k.witness_id[j] == id)
			return;
		if (at == RM_WITNESSES && !s->k.witness_id[j])
			at = j;
	}
	if (at == RM_WITNESSES)
		at = s->next_witness++ % RM_WITNESSES;
	s->k.witness[at] = w;
	s->k.witness_id[at] = id;
}

/* Where cudaMalloc places small buffers: 512 bytes apart on an H200. */
#define PROBE_STEP 512

/*
 * The allocations at k's first byte and just below and above witness 0
 * (of size n), wherever they lie wholly inside k, join its witnesses.  A
 * pin of a fresh buffer whose predecessors are all freed then finds the
 * object through a neighbour that lives on (test_gpu_rm_threads: each
 * pin a new buffer, beside other threads' long-lived ones).  A buffer
 * shorter than its spacing leaves a gap: each side is probed at its next
 * byte and at the next PROBE_STEP boundary.  At most five queries, made
 * only after an export, which costs far more.
 */
static void add_neighbours(struct rm_known *k, uint64_t n)
{
	uint64_t w = k->witness[0], end = k->va_base + k->size;
	uint64_t at[5] = { k->va_base, w - 1, (w - 1) & ~(PROBE_STEP - 1ULL),
			   w + n, (w + n + PROBE_STEP - 1) &
				  ~(PROBE_STEP - 1ULL) };
	struct gdr_cuda_ptr p;
	int i, j, got = 1;

	for (i = 0; i < 5 && got < RM_WITNESSES; i++) {
		if (at[i] < k->va_base || at[i] >= end ||
		    (at[i] >= w && at[i] < w + n) ||
		    (i && at[i] == at[i - 1]))
			continue;
		gdr_cuda_pointer(at[i], &p);
		/* cudaMalloc memory (a context's) wholly inside k. */
		if (!p.buffer_id || !p.ctx || p.start < k->va_base ||
		    p.start + p.size > end)
			continue;
		for (j = 0; j < got && k->witness_id[j] != p.buffer_id; j++)
			;
		if (j < got)
			continue;
		k->witness[got] = p.start;
		k->witness_id[got++] = p.buffer_id;
	}
}

void rm_known_add(const struct rm_gpu *gpu, struct rm_known *k,
		  uint64_t found_size)
{
	unsigned int i, j, at = KNOWN_MAX;

	if (found_size)
		add_neighbours(k, found_size);
	pthread_mutex_lock(&known_lock);
	check_gen();
	for (i = 0; i < KNOWN_MAX; i++) {
		if (same(&slots[i], gpu, k)) {
			for (j = 0; j < RM_WITNESSES; j++)
				if (k->witness_id[j])
					add_witness(&slots[i], k->witness[j],
						    k->witness_id[j]);
			pthread_mutex_unlock(&known_lock);
			return;
		}
		/* An older object at those addresses is gone. */
		if (slots[i].gpu == gpu && k->va_base < slots[i].k.va_base +
		    slots[i].k.size && slots[i].k.va_base < k->va_base +
		    k->size)
			slots[i].gpu = NULL;
		if (at == KNOWN_MAX && !slots[i].gpu)
			at = i;
	}
	if (at == KNOWN_MAX)
		at = next_slot++ % KNOWN_MAX;
	slots[at].gpu = gpu;
	slots[at].k = *k;
	slots[at].next_witness = 1;
	pthread_mutex_unlock(&known_lock);
}

static int find(const struct rm_gpu *gpu, uint64_t lo, uint64_t hi,
		struct rm_known *k)
{
	unsigned int i;
	int found = 0;

	pthread_mutex_lock(&known_lock);
	check_gen();
	for (i = 0; i < KNOWN_MAX && !found; i++)
		if (slots[i].gpu == gpu && lo >= slots[i].k.va_base &&
		    hi <= slots[i].k.va_base + slots[i].k.size) {
			*k = slots[i].k;
			found = 1;
		}
	pthread_mutex_unlock(&known_lock);
	return found;
}

/* Forget k, or with gone only its witnesses of those buffer IDs (found
 * dead: a new witness takes a dead one's place first). */
static void forget(const struct rm_gpu *gpu, const struct rm_known *k,
		   const unsigned long long *gone)
{
	unsigned int i, j, m;

	pthread_mutex_lock(&known_lock);
	for (i = 0; i < KNOWN_MAX; i++) {
		if (!same(&slots[i], gpu, k))
			continue;
		if (!gone)
			slots[i].gpu = NULL;
		for (j = 0; gone && j < RM_WITNESSES; j++)
			for (m = 0; m < RM_WITNESSES; m++)
				if (gone[m] &&
				    slots[i].k.witness_id[j] == gone[m])
					slots[i].k.witness_id[j] = 0;
	}
	pthread_mutex_unlock(&known_lock);
}

int rm_known_take(struct rm_gpu *gpu, uint64_t lo, uint64_t hi,
		  int have_client, uint32_t client, struct rm_known *k,
		  uint32_t *dup)
{
	unsigned long long gone[RM_WITNESSES] = { 0 };
	struct gdr_cuda_ptr w;
	uint64_t size = 0;
	char why[RM_WHY_LEN];
	int j;

	*dup = 0;
	if (!find(gpu, lo, hi, k) || (have_client && k->client != client))
		return 0;
	/* The duplicate first: a witness alive after it was alive at it. */
	if (!gdr_rm_dup(gpu, k->client, k->src, dup, why, sizeof(why))) {
		for (j = 0; j < RM_WITNESSES; j++) {
			if (!k->witness_id[j])
				continue;
			gdr_cuda_pointer(k->witness[j], &w);
			if (w.buffer_id == k->witness_id[j])
				break;
			gone[j] = k->witness_id[j];
		}
		if (j < RM_WITNESSES && !gdr_rm_object_size(*dup, &size) &&
		    size == k->size) {
			if (j)
				forget(gpu, k, gone);
			return 1;
		}
		gdr_rm_free(gpu, *dup);
		*dup = 0;
	}
	gdr_dbg("the object found earlier at 0x%llx is gone or replaced: exporting",
		(unsigned long long)k->va_base);
	forget(gpu, k, NULL);
	return 0;
}
