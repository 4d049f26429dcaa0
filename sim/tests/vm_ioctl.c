// SPDX-License-Identifier: MIT
/*
 * /dev/nvsim's ioctls and pread/pwrite with bad input (inside the VM,
 * nvsim.ko loaded): every one gives a clean error and changes nothing;
 * the runner's kernel-log scan proves there was no warning.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "vm_sim.h"

static int fd;

static int io(unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* A reserved address range of len bytes, 64 KiB aligned. */
static uint64_t reserve(size_t len)
{
	void *p = mmap(NULL, len + SIM_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	REQUIRE(p != MAP_FAILED, "mmap");
	return ((uintptr_t)p + SIM_PAGE - 1) & ~(SIM_PAGE - 1);
}

/*
 * Memory of device 1 in the same address space: its own pages, counted on
 * it alone, named as its by QUERY and MEM_INFO.  [va, +4 pages) is free.
 */
static void second_gpu(uint64_t va)
{
	struct nvsim_info i0 = { .device = 0 }, i1 = { .device = 1 }, now;
	struct nvsim_alloc a = { .va = va, .size = 2 * SIM_PAGE, .device = 1 };
	struct nvsim_mem_create mc = { .size = SIM_PAGE, .device = 1 };
	struct nvsim_mem_info mi = { 0 };
	struct nvsim_mem_release mr = { 0 };
	struct nvsim_unmap u = { .va = va, .size = 2 * SIM_PAGE };
	struct nvsim_query q = { .va = va + 3 };
	long used1 = nvsim_gpu_count(1, "used_pages");
	long used0 = nvsim_gpu_count(0, "used_pages");

	CHECK(io(NVSIM_IOC_INFO, &i0) == 0 && io(NVSIM_IOC_INFO, &i1) == 0,
	      "INFO of devices 0 and 1");
	CHECK(i1.device == 1 && i1.bar_phys != i0.bar_phys &&
	      memcmp(i1.uuid, i0.uuid, sizeof(i0.uuid)) &&
	      (i1.pci_bus != i0.pci_bus || i1.pci_device != i0.pci_device),
	      "devices 0 and 1 are not distinct GPUs");
	CHECK(io(NVSIM_IOC_ALLOC, &a) == 0, "ALLOC on device 1");
	CHECK(io(NVSIM_IOC_QUERY, &q) == 0 && q.device == 1 && q.base == va,
	      "QUERY of device 1's memory: device %u", q.device);
	CHECK(nvsim_gpu_count(1, "used_pages") == used1 + 2 &&
	      nvsim_gpu_count(0, "used_pages") == used0 &&
	      nvsim_gpu_count(1, "allocations") >= 1,
	      "device 1's pages counted on device 0");
	now = i1;
	CHECK(io(NVSIM_IOC_INFO, &now) == 0 &&
	      now.free_bytes == i1.free_bytes - 2 * SIM_PAGE,
	      "device 1 free_bytes %llu, was %llu",
	      (unsigned long long)now.free_bytes,
	      (unsigned long long)i1.free_bytes);
	CHECK(io(NVSIM_IOC_MEM_CREATE, &mc) == 0, "MEM_CREATE on device 1");
	mi.handle = mc.handle;
	CHECK(io(NVSIM_IOC_MEM_INFO, &mi) == 0 && mi.device == 1,
	      "MEM_INFO: device %u", mi.device);
	mr.handle = mc.handle;
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == 0, "release");
	CHECK(io(NVSIM_IOC_UNMAP, &u) == 0, "UNMAP device 1's memory");
	CHECK(nvsim_gpu_count(1, "used_pages") == used1, "device 1 freed");
}

int main(void)
{
	struct nvsim_info info = { 0 }, info1;
	struct nvsim_alloc a = { 0 };
	struct nvsim_unmap u = { 0 };
	struct nvsim_query q = { 0 };
	struct nvsim_mem_create mc = { 0 };
	struct nvsim_mem_release mr = { 0 };
	struct nvsim_mem_retain mt = { 0 };
	struct nvsim_mem_info mi = { 0 };
	struct nvsim_map m = { 0 };
	struct nvsim_memset ms = { 0 };
	struct nvsim_copy cp = { 0 };
	long allocs0 = nvsim_count("allocations"), used0 = nvsim_count("used_pages");
	uint64_t va = reserve(16 * SIM_PAGE);
	char buf[256];
	void *volatile bad = (void *)8;
	unsigned int ndev;
	int status;
	pid_t pid;

	fd = open(NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENODEV) {
		SKIP("nvsim has no device");
		return test_done();
	}
	REQUIRE(fd >= 0, "open %s: %s", NVSIM_DEVICE_PATH, strerror(errno));
	CHECK(io(NVSIM_IOC_INFO, &info) == 0, "INFO");
	CHECK(info.abi_version == NVSIM_ABI_VERSION &&
	      info.page_size == SIM_PAGE && info.bar_size >= SIM_PAGE &&
	      info.free_bytes <= info.bar_size && info.device == 0 &&
	      info.device_count >= 1 && info.device_count <= NVSIM_MAX_DEVICES,
	      "info");
	CHECK(io(NVSIM_IOC_INFO, (void *)8) == EFAULT, "INFO to a bad pointer");
	ndev = info.device_count;
	memset(&info1, 0, sizeof(info1));
	info1.device = ndev;
	CHECK(io(NVSIM_IOC_INFO, &info1) == ENODEV, "INFO of device %u", ndev);
	info1.device = 0;
	info1.reserved[1] = 1;
	CHECK(io(NVSIM_IOC_INFO, &info1) == EINVAL, "INFO reserved field");
	CHECK(io(_IOWR(NVSIM_IOC_MAGIC, 99, struct nvsim_alloc), &a) == ENOTTY,
	      "unknown ioctl");
	CHECK(io(_IOWR('x', 7, struct nvsim_alloc), &a) == ENOTTY,
	      "foreign ioctl");

	/* ALLOC */
	a.va = va + 1; a.size = SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EINVAL, "unaligned va");
	a.va = va; a.size = 0;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EINVAL, "size 0");
	a.size = SIM_PAGE + 1;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EINVAL, "unaligned size");
	a.va = ~0ULL << 16; a.size = 2 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EINVAL, "wrapping range");
	a.va = 1ULL << 62; a.size = SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EINVAL, "kernel address");
	a.va = va; a.size = info.bar_size + SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == ENOMEM, "larger than the BAR");
	a.size = SIM_PAGE; a.device = ndev;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == ENODEV, "ALLOC on no device");
	a.device = 0; a.size = 4 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == 0, "good ALLOC");
	a.va = va + 2 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == EEXIST, "overlap");
	CHECK(nvsim_count("allocations") == allocs0 + 1, "one allocation");

	/* QUERY */
	q.va = va + 5;
	CHECK(io(NVSIM_IOC_QUERY, &q) == 0 && q.base == va &&
	      q.size == 4 * SIM_PAGE && q.p2p_token && q.va_space &&
	      q.device == 0, "QUERY");
	q.va = va + 4 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_QUERY, &q) == ENOENT, "QUERY past the end");

	/* pread/pwrite */
	memset(buf, 0x5a, sizeof(buf));
	CHECK(pwrite(fd, buf, sizeof(buf), (off_t)(va + 100)) == sizeof(buf),
	      "pwrite");
	CHECK(pread(fd, buf, sizeof(buf), (off_t)(va + 4 * SIM_PAGE - 10)) < 0 &&
	      errno == EFAULT, "pread across the end");
	CHECK(pread(fd, buf, sizeof(buf), (off_t)(va - 4096)) < 0 &&
	      errno == EFAULT, "pread before the start");
	CHECK(pread(fd, bad, sizeof(buf), (off_t)va) < 0 &&
	      errno == EFAULT, "pread to a bad buffer");
	CHECK(pread(fd, buf, 0, (off_t)va) == 0, "pread of 0 bytes");
	CHECK(pread(fd, buf, sizeof(buf), -4096) < 0, "negative offset");

	/* MEMSET / COPY */
	ms.va = va; ms.count = 10; ms.elem_size = 3;
	CHECK(io(NVSIM_IOC_MEMSET, &ms) == EINVAL, "element size 3");
	ms.elem_size = 4; ms.va = va + 2;
	CHECK(io(NVSIM_IOC_MEMSET, &ms) == EINVAL, "misaligned memset");
	ms.va = va; ms.count = ~0ULL / 2;
	CHECK(io(NVSIM_IOC_MEMSET, &ms) == EINVAL, "memset count overflow");
	ms.count = SIM_PAGE;
	CHECK(io(NVSIM_IOC_MEMSET, &ms) == 0, "memset of 4 pages");
	ms.count = SIM_PAGE + 1;
	CHECK(io(NVSIM_IOC_MEMSET, &ms) == EFAULT, "memset past the end");
	cp.dst = va; cp.src = va + SIM_PAGE; cp.size = 3 * SIM_PAGE + 1;
	CHECK(io(NVSIM_IOC_COPY, &cp) == EFAULT, "copy past the end");
	cp.src = (uintptr_t)buf; cp.size = 10;
	CHECK(io(NVSIM_IOC_COPY, &cp) == EFAULT, "copy from host memory");

	/* Handles and mappings */
	mc.size = SIM_PAGE; mc.device = ndev;
	CHECK(io(NVSIM_IOC_MEM_CREATE, &mc) == ENODEV, "MEM_CREATE on no device");
	mc.device = 0; mc.reserved = 1;
	CHECK(io(NVSIM_IOC_MEM_CREATE, &mc) == EINVAL, "MEM_CREATE reserved");
	mc.reserved = 0; mc.size = 3 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_MEM_CREATE, &mc) == 0 && mc.handle, "MEM_CREATE");
	m.handle = mc.handle; m.va = va + 8 * SIM_PAGE; m.size = 2 * SIM_PAGE;
	m.offset = 2 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_MAP, &m) == EINVAL, "map beyond the mem");
	m.offset = ~0ULL << 16;
	CHECK(io(NVSIM_IOC_MAP, &m) == EINVAL, "huge offset");
	m.offset = SIM_PAGE;
	CHECK(io(NVSIM_IOC_MAP, &m) == 0, "MAP");
	m.handle = 12345;
	CHECK(io(NVSIM_IOC_MAP, &m) == ENOENT, "map of an unknown handle");
	mt.va = va + 9 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_MEM_RETAIN, &mt) == 0 && mt.handle == mc.handle &&
	      mt.size == 3 * SIM_PAGE, "MEM_RETAIN");
	mi.handle = mc.handle;
	CHECK(io(NVSIM_IOC_MEM_INFO, &mi) == 0 && mi.size == 3 * SIM_PAGE &&
	      mi.device == 0, "MEM_INFO");
	mi.handle = 0;
	CHECK(io(NVSIM_IOC_MEM_INFO, &mi) == ENOENT, "MEM_INFO of handle 0");
	mr.handle = 999;
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == ENOENT, "release unknown");
	mr.handle = mc.handle; mr.reserved = 1;
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == EINVAL, "release reserved");
	mr.reserved = 0;
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == 0, "release 1");
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == 0, "release 2");
	CHECK(io(NVSIM_IOC_MEM_RELEASE, &mr) == ENOENT, "release 3");

	/* UNMAP */
	u.va = va + 8 * SIM_PAGE; u.size = SIM_PAGE;
	CHECK(io(NVSIM_IOC_UNMAP, &u) == EINVAL, "partial unmap");
	u.va = va + 12 * SIM_PAGE; u.size = SIM_PAGE;
	CHECK(io(NVSIM_IOC_UNMAP, &u) == ENOENT, "unmap of nothing");
	u.va = ~0ULL; u.size = 2;
	CHECK(io(NVSIM_IOC_UNMAP, &u) == EINVAL, "wrapping unmap");

	if (ndev > 1)
		second_gpu(va + 12 * SIM_PAGE);

	/* Another process may not use this fd. */
	pid = fork();
	if (pid == 0)
		_exit(io(NVSIM_IOC_QUERY, &q) == EACCES &&
		      pread(fd, buf, 1, (off_t)va) < 0 && errno == EACCES ? 0 : 1);
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "fd used from a forked child");

	/* One UNMAP of the whole range frees both mappings. */
	u.va = va; u.size = 16 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_UNMAP, &u) == 0, "UNMAP everything");
	CHECK(nvsim_count("allocations") == allocs0 &&
	      nvsim_count("used_pages") == used0, "all freed");

	/* Closing the fd frees what it still holds. */
	a.va = va; a.size = 2 * SIM_PAGE;
	CHECK(io(NVSIM_IOC_ALLOC, &a) == 0, "ALLOC again");
	mc.size = SIM_PAGE;
	CHECK(io(NVSIM_IOC_MEM_CREATE, &mc) == 0, "MEM_CREATE again");
	close(fd);
	CHECK(nvsim_count("allocations") == allocs0 &&
	      nvsim_count("used_pages") == used0, "close frees");
	return test_done();
}
