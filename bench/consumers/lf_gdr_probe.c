/*
 * lf_gdr_probe: drive libfabric's own gdrcopy code (src/hmem_cuda_gdrcopy.c)
 * on a machine with no EFA, CXI or verbs device, where no stock provider
 * reaches it from fabtests.
 *
 * Linked statically against the libfabric build so that it can call the
 * internal hmem API that the providers call:
 *   part "devreg": ofi_hmem_dev_register / ofi_hmem_dev_reg_copy_to_hmem /
 *     ofi_hmem_dev_reg_copy_from_hmem / ofi_hmem_dev_unregister, as rxm
 *     (rxm_domain.c, rxm_hmem.c) and efa (efa_rdm_mr.c, efa_hmem.c) do, each
 *     result checked against cudaMemcpy (libfabric's cuda_copy_*_dev) with
 *     guard bytes around the range;
 *   part "shm": two shm endpoints in this process, their CUDA buffers
 *     registered the way efa registers them with its shm peer (hmem_data =
 *     the gdrcopy handle, flags OFI_HMEM_DATA_DEV_REG_HANDLE |
 *     FI_HMEM_DEVICE_ONLY), so shm's inline/inject protocol copies through
 *     gdr_copy_from_mapping on send and gdr_copy_to_mapping on receive
 *     (smr_ep.c smr_select_proto, hmem.c ofi_copy_mr_iov); the same with
 *     plain MRs (cudaMemcpy) as the control, and an 8-byte latency loop.
 *
 * Exit: 0 all passed, 1 a check failed, 2 libfabric has gdrcopy off (the
 * FI_HMEM_CUDA_USE_GDRCOPY=0 baseline, or gdr_open failed), 3 setup failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

/* libfabric internals, as declared in include/ofi_hmem.h and ofi_mr.h */
int ofi_hmem_dev_register(enum fi_hmem_iface iface, const void *addr,
			  size_t size, uint64_t *handle);
int ofi_hmem_dev_unregister(enum fi_hmem_iface iface, uint64_t handle);
int ofi_hmem_dev_reg_copy_to_hmem(enum fi_hmem_iface iface, uint64_t handle,
				  void *dest, const void *src, size_t size);
int ofi_hmem_dev_reg_copy_from_hmem(enum fi_hmem_iface iface, uint64_t handle,
				    void *dest, const void *src, size_t size);
bool ofi_hmem_is_initialized(enum fi_hmem_iface iface);
bool cuda_is_gdrcopy_enabled(void);
int cuda_copy_to_dev(uint64_t device, void *dev, const void *host, size_t size);
int cuda_copy_from_dev(uint64_t device, void *host, const void *dev, size_t size);
int ofi_cudaMalloc(void **ptr, size_t size);	/* cudaError_t */
int ofi_cudaFree(void *ptr);
#define OFI_HMEM_DATA_DEV_REG_HANDLE (1ULL << 60)

/* Linked with -Wl,--wrap=cuda_gdrcopy_to_dev,--wrap=cuda_gdrcopy_from_dev:
 * hmem_cuda.c's cuda_dev_reg_copy_{to,from}_hmem call these two functions
 * of hmem_cuda_gdrcopy.c, which call gdr_copy_{to,from}_mapping; counting
 * them here shows which copies went through libgdrapi. */
static unsigned long n_to_dev, n_from_dev;
void __real_cuda_gdrcopy_to_dev(uint64_t handle, void *devptr,
				const void *hostptr, size_t len);
void __real_cuda_gdrcopy_from_dev(uint64_t handle, void *hostptr,
				  const void *devptr, size_t len);

void __wrap_cuda_gdrcopy_to_dev(uint64_t handle, void *devptr,
				const void *hostptr, size_t len)
{
	n_to_dev++;
	__real_cuda_gdrcopy_to_dev(handle, devptr, hostptr, len);
}

void __wrap_cuda_gdrcopy_from_dev(uint64_t handle, void *hostptr,
				  const void *devptr, size_t len)
{
	n_from_dev++;
	__real_cuda_gdrcopy_from_dev(handle, hostptr, devptr, len);
}

/* LF_PROBE_HOST=1 (a self-test of this program on a machine without a GPU):
 * host memory and libfabric's FI_HMEM_SYSTEM dev_reg ops (memcpy) stand in
 * for CUDA memory and gdrcopy */
static enum fi_hmem_iface CUDA = FI_HMEM_CUDA;
static int host_mode;

static int dev_alloc(void **p, size_t n)
{
	if (!host_mode)
		return ofi_cudaMalloc(p, n);
	*p = malloc(n);
	return *p == NULL;
}

static void dev_free(void *p)
{
	if (host_mode)
		free(p);
	else
		ofi_cudaFree(p);
}

static void h2d(void *dev, const void *host, size_t n)
{
	if (host_mode)
		memcpy(dev, host, n);
	else
		cuda_copy_to_dev(0, dev, host, n);
}

static void d2h(void *host, const void *dev, size_t n)
{
	if (host_mode)
		memcpy(host, dev, n);
	else
		cuda_copy_from_dev(0, host, dev, n);
}

#define BUF_SIZE (4u << 20)
#define GUARD 64

static int failures, checks, registrations;

#define FAIL(...) do { failures++; printf("FAIL: " __VA_ARGS__); printf("\n"); } while (0)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 12345;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = (unsigned char)(x >> 16);
	}
}

static int compare(const char *what, const unsigned char *want,
		   const unsigned char *got, size_t len)
{
	checks++;
	for (size_t i = 0; i < len; i++) {
		if (want[i] != got[i]) {
			FAIL("%s: byte %zu of %zu is 0x%02x, expected 0x%02x",
			     what, i, len, got[i], want[i]);
			return -1;
		}
	}
	return 0;
}

static int reg(void *p, size_t len, uint64_t *h)
{
	int ret = ofi_hmem_dev_register(CUDA, p, len, h);

	if (ret)
		FAIL("ofi_hmem_dev_register(%p, %zu) = %d", p, len, ret);
	else
		registrations++;
	return ret;
}

/* one registration of [base+off, +len): write through gdrcopy, read with
 * cudaMemcpy and the reverse, guard bytes around the range untouched, and
 * a copy into the middle of the registration */
static void devreg_case(unsigned char *base, size_t off, size_t len,
			unsigned seed, unsigned char *a, unsigned char *b)
{
	char what[128];
	unsigned char guard[GUARD], g2[GUARD];
	size_t pre = off < GUARD ? off : GUARD;
	size_t post = BUF_SIZE - (off + len) < GUARD ? BUF_SIZE - (off + len) : GUARD;
	uint64_t h;

	memset(guard, 0x5a, sizeof(guard));
	if (pre)
		h2d(base + off - pre, guard, pre);
	if (post)
		h2d(base + off + len, guard, post);
	if (reg(base + off, len, &h))
		return;

	fill(a, len, seed);
	ofi_hmem_dev_reg_copy_to_hmem(CUDA, h, base + off, a, len);
	memset(b, 0, len);
	d2h(b, base + off, len);
	snprintf(what, sizeof(what), "devreg off %zu len %zu: gdrcopy write, cudaMemcpy read", off, len);
	compare(what, a, b, len);

	if (pre) {
		d2h(g2, base + off - pre, pre);
		snprintf(what, sizeof(what), "devreg off %zu len %zu: %zu guard bytes before", off, len, pre);
		compare(what, guard, g2, pre);
	}
	if (post) {
		d2h(g2, base + off + len, post);
		snprintf(what, sizeof(what), "devreg off %zu len %zu: %zu guard bytes after", off, len, post);
		compare(what, guard, g2, post);
	}

	fill(a, len, seed + 1000);
	h2d(base + off, a, len);
	memset(b, 0, len);
	ofi_hmem_dev_reg_copy_from_hmem(CUDA, h, b, base + off, len);
	snprintf(what, sizeof(what), "devreg off %zu len %zu: cudaMemcpy write, gdrcopy read", off, len);
	compare(what, a, b, len);

	if (len >= 4) {	/* a copy inside the registration, not at its start */
		size_t o2 = len / 2, l2 = len / 4;

		fill(a, l2, seed + 2000);
		ofi_hmem_dev_reg_copy_to_hmem(CUDA, h, base + off + o2, a, l2);
		memset(b, 0, l2);
		ofi_hmem_dev_reg_copy_from_hmem(CUDA, h, b, base + off + o2, l2);
		snprintf(what, sizeof(what), "devreg off %zu len %zu: sub-range [%zu, +%zu) round trip", off, len, o2, l2);
		compare(what, a, b, l2);
	}

	if (ofi_hmem_dev_unregister(CUDA, h))
		FAIL("ofi_hmem_dev_unregister off %zu len %zu", off, len);
}

static void part_devreg(void)
{
	static const size_t cases[][2] = {
		{0, 1}, {0, 8}, {1, 7}, {63, 64}, {100, 1000}, {4095, 4097},
		{65535, 2}, {65536, 65536}, {12345, 200000}, {131072 - 8, 3072},
		{0, BUF_SIZE},
	};
	enum { NMULTI = 32 };
	unsigned char *base = NULL, *a = malloc(BUF_SIZE), *b = malloc(BUF_SIZE);
	uint64_t hs[NMULTI];
	int c0 = checks, f0 = failures, r0 = registrations;
	unsigned long to0 = n_to_dev, from0 = n_from_dev;
	double t0 = now_us();

	if (dev_alloc((void **)&base, BUF_SIZE) || !base || !a || !b) {
		FAIL("devreg: cudaMalloc/malloc of %u bytes", BUF_SIZE);
		return;
	}
	if ((uintptr_t)base & 0xffff)
		printf("devreg: note: cudaMalloc gave %p, not 64 KiB aligned\n", (void *)base);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		devreg_case(base, cases[i][0], cases[i][1], (unsigned)i + 1, a, b);

	/* many live registrations over the same GPU pages (overlapping
	 * 8 KiB windows 2 KiB apart), each written through its own handle,
	 * all checked, then released out of order */
	for (int i = 0; i < NMULTI; i++)
		if (reg(base + 2048 * i, 8192, &hs[i]))
			hs[i] = 0;
	for (int i = 0; i < NMULTI; i++) {
		if (!hs[i])
			continue;
		fill(a, 2048, 500 + i);
		ofi_hmem_dev_reg_copy_to_hmem(CUDA, hs[i], base + 2048 * i, a, 2048);
	}
	for (int i = 0; i < NMULTI; i++) {
		char what[96];

		if (!hs[i])
			continue;
		fill(a, 2048, 500 + i);
		memset(b, 0, 2048);
		/* read it through a different, overlapping handle where one covers it */
		uint64_t h = (i > 0 && hs[i - 1]) ? hs[i - 1] : hs[i];
		ofi_hmem_dev_reg_copy_from_hmem(CUDA, h, b, base + 2048 * i, 2048);
		snprintf(what, sizeof(what), "devreg multi: window %d read through handle %d", i,
			 h == hs[i] ? i : i - 1);
		compare(what, a, b, 2048);
	}
	for (int i = 0; i < NMULTI; i += 2)
		if (hs[i] && ofi_hmem_dev_unregister(CUDA, hs[i]))
			FAIL("devreg multi: unregister %d", i);
	for (int i = NMULTI - 1; i > 0; i -= 2)
		if (hs[i] && ofi_hmem_dev_unregister(CUDA, hs[i]))
			FAIL("devreg multi: unregister %d", i);

	checks++;
	if (!host_mode && (n_to_dev - to0 < 20 || n_from_dev - from0 < 20))
		FAIL("devreg: only %lu + %lu copies went through libfabric's gdrcopy code",
		     n_to_dev - to0, n_from_dev - from0);
	dev_free(base);
	free(a);
	free(b);
	printf("devreg: %d checks, %d failed, %d registrations, %lu + %lu gdrcopy copies to/from device, %.0f ms\n",
	       checks - c0, failures - f0, registrations - r0, n_to_dev - to0, n_from_dev - from0,
	       (now_us() - t0) / 1e3);
}

/* ---- shm, two endpoints in this process ---- */

struct shm {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq[2];
	struct fid_ep *ep[2];
	fi_addr_t addr[2];
};

#define CHECK(call) do { int r_ = (call); if (r_) { \
	printf("SETUP: %s = %d (%s)\n", #call, r_, fi_strerror(-r_)); return -1; } } while (0)

static int shm_open(struct shm *s)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_HMEM;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_HMEM | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("shm");
	CHECK(fi_getinfo(FI_VERSION(2, 0), NULL, NULL, 0, hints, &s->info));
	fi_freeinfo(hints);
	printf("shm: provider %s, domain %s, mr_mode 0x%x\n", s->info->fabric_attr->prov_name,
	       s->info->domain_attr->name, s->info->domain_attr->mr_mode);
	CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	CHECK(fi_av_open(s->domain, &av_attr, &s->av, NULL));
	for (int i = 0; i < 2; i++) {
		char name[256];
		size_t len = sizeof(name);

		CHECK(fi_cq_open(s->domain, &cq_attr, &s->cq[i], NULL));
		CHECK(fi_endpoint(s->domain, s->info, &s->ep[i], NULL));
		CHECK(fi_ep_bind(s->ep[i], &s->av->fid, 0));
		CHECK(fi_ep_bind(s->ep[i], &s->cq[i]->fid, FI_TRANSMIT | FI_RECV));
		CHECK(fi_enable(s->ep[i]));
		CHECK(fi_getname(&s->ep[i]->fid, name, &len));
		if (fi_av_insert(s->av, name, 1, &s->addr[i], 0, NULL) != 1) {
			printf("SETUP: fi_av_insert failed\n");
			return -1;
		}
	}
	return 0;
}

/* wait for one completion on cq; progress the other while waiting */
static int wait_cq(struct shm *s, int i, size_t *len)
{
	struct fi_cq_tagged_entry e;
	double deadline = now_us() + 5e6;

	for (;;) {
		ssize_t r = fi_cq_read(s->cq[i], &e, 1);

		if (r == 1) {
			if (len)
				*len = e.len;
			return 0;
		}
		if (r == -FI_EAVAIL) {
			struct fi_cq_err_entry err = {0};

			fi_cq_readerr(s->cq[i], &err, 0);
			FAIL("cq %d error %d (%s)", i, err.err, fi_strerror(err.err));
			return -1;
		}
		if (r != -FI_EAGAIN) {
			FAIL("fi_cq_read %d = %zd", i, r);
			return -1;
		}
		fi_cq_read(s->cq[!i], NULL, 0);	/* progress */
		if (now_us() > deadline) {
			FAIL("cq %d: no completion in 5 s", i);
			return -1;
		}
	}
}

static int xfer(struct shm *s, void *tx, void *txd, void *rx, void *rxd,
		size_t size, uint64_t tag)
{
	struct fi_context2 sctx, rctx;
	size_t got = 0;
	ssize_t r;

	r = fi_trecv(s->ep[1], rx, size, rxd, s->addr[0], tag, 0, &rctx);
	if (r) {
		FAIL("fi_trecv %zu = %zd", size, r);
		return -1;
	}
	while ((r = fi_tsend(s->ep[0], tx, size, txd, s->addr[1], tag, &sctx)) == -FI_EAGAIN) {
		fi_cq_read(s->cq[0], NULL, 0);
		fi_cq_read(s->cq[1], NULL, 0);
	}
	if (r) {
		FAIL("fi_tsend %zu = %zd", size, r);
		return -1;
	}
	if (wait_cq(s, 0, NULL) || wait_cq(s, 1, &got))
		return -1;
	if (got != size) {
		FAIL("received %zu bytes, sent %zu", got, size);
		return -1;
	}
	return 0;
}

static int shm_mode(struct shm *s, bool dev_reg, int iters, double *lat8)
{
	static const size_t sizes[] = {1, 8, 64, 100, 512, 1024, 2048, 3072};
	const size_t len = 65536;
	unsigned char *tx = NULL, *rx = NULL, *a = malloc(len), *b = malloc(len), *z = calloc(1, len);
	uint64_t htx = 0, hrx = 0;
	struct fid_mr *mtx = NULL, *mrx = NULL;
	const char *mode = dev_reg ? "gdrcopy MRs (as efa registers with shm)" : "plain MRs (cudaMemcpy)";
	int c0 = checks, f0 = failures;
	uint64_t tag = 1;
	unsigned long t0 = n_to_dev, fr0 = n_from_dev, msgs = 0;

	/* 2 MiB allocations (cudaMalloc aligns them to 2 MiB), of which the
	 * first 64 KiB are used: libfabric pins whole 64 KiB GPU pages around
	 * a registration, which must not reach outside the allocation */
	if (dev_alloc((void **)&tx, 2u << 20) || dev_alloc((void **)&rx, 2u << 20)) {
		FAIL("shm: cudaMalloc");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		unsigned char *p = i ? rx : tx;
		uint64_t *h = i ? &hrx : &htx;
		struct fid_mr **m = i ? &mrx : &mtx;
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct fi_mr_attr attr = {
			.mr_iov = &iov, .iov_count = 1, .access = FI_SEND | FI_RECV,
			.iface = CUDA, .device.cuda = 0,
		};
		/* efa adds FI_HMEM_DEVICE_ONLY for shm; without the dev-reg
		 * handle that would pick shm's IPC protocol, which CUDA does
		 * not allow within one process, so the control leaves it out */
		uint64_t flags = 0;
		int ret;

		if (dev_reg) {
			if (reg(p, len, h))
				return -1;
			attr.hmem_data = (void *)(uintptr_t)*h;
			flags = OFI_HMEM_DATA_DEV_REG_HANDLE |
				(host_mode ? 0 : FI_HMEM_DEVICE_ONLY);
		}
		ret = fi_mr_regattr(s->domain, &attr, flags, m);
		if (ret) {
			FAIL("shm: fi_mr_regattr = %d (%s)", ret, fi_strerror(-ret));
			return -1;
		}
	}

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];

		for (int it = 0; it < iters; it++) {
			char what[96];

			fill(a, n, (unsigned)(n * 131 + it));
			h2d(tx, a, n);
			h2d(rx, z, n);
			if (xfer(s, tx, fi_mr_desc(mtx), rx, fi_mr_desc(mrx), n, tag++))
				goto out;
			memset(b, 0, n);
			d2h(b, rx, n);
			snprintf(what, sizeof(what), "shm %s: %zu B, iteration %d",
				 dev_reg ? "gdrcopy" : "plain", n, it);
			if (compare(what, a, b, n))
				goto out;
			msgs++;
		}
	}
	/* each message: shm's send copies out of tx (gdr_copy_from_mapping),
	 * its receive copies into rx (gdr_copy_to_mapping) */
	if (!host_mode) {
		unsigned long dt = n_to_dev - t0, df = n_from_dev - fr0;

		checks++;
		printf("shm %s: %lu messages, libfabric gdrcopy copies: %lu to device, %lu from device\n",
		       dev_reg ? "gdrcopy" : "plain", msgs, dt, df);
		if (dev_reg && (dt < msgs || df < msgs))
			FAIL("shm gdrcopy: fewer gdrcopy copies than messages (%lu, %lu < %lu)", dt, df, msgs);
		if (!dev_reg && (dt || df))
			FAIL("shm plain: %lu + %lu gdrcopy copies, expected none", dt, df);
	}

	/* 8-byte one-way latency: send + receive + both completions */
	{
		int n = 2000;
		double t0;

		for (int i = 0; i < 100; i++)
			xfer(s, tx, fi_mr_desc(mtx), rx, fi_mr_desc(mrx), 8, tag++);
		t0 = now_us();
		for (int i = 0; i < n; i++)
			if (xfer(s, tx, fi_mr_desc(mtx), rx, fi_mr_desc(mrx), 8, tag++))
				break;
		*lat8 = (now_us() - t0) / n;
	}
out:
	fi_close(&mtx->fid);
	fi_close(&mrx->fid);
	if (htx)
		ofi_hmem_dev_unregister(CUDA, htx);
	if (hrx)
		ofi_hmem_dev_unregister(CUDA, hrx);
	dev_free(tx);
	dev_free(rx);
	free(a);
	free(b);
	free(z);
	printf("shm, %s: %d checks, %d failed; 8 B send+recv %.2f us\n", mode,
	       checks - c0, failures - f0, *lat8);
	return 0;
}

static void where_gdrapi(void)
{
	void *h = dlopen("libgdrapi.so", RTLD_NOW | RTLD_NOLOAD);
	struct link_map *lm = NULL;

	if (!h)
		h = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		printf("libgdrapi: not loaded in this process\n");
		return;
	}
	if (!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm) {
		char *rp = realpath(lm->l_name, NULL);

		printf("libgdrapi: loaded from %s (%s)\n", lm->l_name, rp ? rp : "?");
		free(rp);
	}
	dlclose(h);
}

int main(int argc, char **argv)
{
	struct shm s = {0};
	double lat_gdr = -1, lat_plain = -1;
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	const char *parts = argc > 2 ? argv[2] : "devreg,shm";
	uint64_t h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("LF_PROBE_HOST") && atoi(getenv("LF_PROBE_HOST"))) {
		host_mode = 1;
		CUDA = FI_HMEM_SYSTEM;
		printf("LF_PROBE_HOST: self-test with host memory, FI_HMEM_SYSTEM dev_reg ops\n");
	}
	printf("lf_gdr_probe: libfabric %u.%u, FI_HMEM_CUDA_USE_GDRCOPY=%s\n",
	       FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
	       getenv("FI_HMEM_CUDA_USE_GDRCOPY") ? getenv("FI_HMEM_CUDA_USE_GDRCOPY") : "(unset: on)");

	/* the first fi_getinfo runs fi_ini, which runs cuda_hmem_init */
	if (shm_open(&s)) {
		printf("RESULT: setup failed\n");
		return 3;
	}
	if (!host_mode && !ofi_hmem_is_initialized(CUDA)) {
		printf("RESULT: libfabric's CUDA hmem is not initialized (no GPU / libcuda?)\n");
		return 3;
	}
	where_gdrapi();
	if (!host_mode && !cuda_is_gdrcopy_enabled()) {
		int ret = ofi_hmem_dev_register(CUDA, &s, 8, &h);

		printf("gdrcopy: off in libfabric; ofi_hmem_dev_register = %d (%s)\n",
		       ret, fi_strerror(-ret));
		if (strstr(parts, "shm"))
			shm_mode(&s, false, iters, &lat_plain);
		printf("RESULT: %s (gdrcopy off), %d checks, %d failed\n",
		       failures ? "FAIL" : "SKIP", checks, failures);
		return failures ? 1 : 2;
	}
	printf("gdrcopy: on in libfabric (cuda_is_gdrcopy_enabled)\n");

	if (strstr(parts, "devreg"))
		part_devreg();
	if (strstr(parts, "shm")) {
		shm_mode(&s, true, iters, &lat_gdr);
		shm_mode(&s, false, iters, &lat_plain);
	}
	for (int i = 0; i < 2; i++)
		fi_close(&s.ep[i]->fid);
	for (int i = 0; i < 2; i++)
		fi_close(&s.cq[i]->fid);
	fi_close(&s.av->fid);
	fi_close(&s.domain->fid);
	fi_close(&s.fabric->fid);
	fi_freeinfo(s.info);
	printf("RESULT: %s, %d checks, %d failed, %d gdrcopy registrations "
	       "(gdr_pin_buffer + gdr_map each), %lu + %lu gdrcopy copies to/from device; "
	       "shm 8 B: gdrcopy %.2f us, cudaMemcpy %.2f us\n",
	       failures ? "FAIL" : "PASS", checks, failures, registrations, n_to_dev, n_from_dev,
	       lat_gdr, lat_plain);
	return failures ? 1 : 0;
}
