/* SPDX-License-Identifier: MIT */
/*
 * Every gdrdrv ioctl at its exact GDRCopy 2.x command value (several
 * encode a pointer's size, not the struct's), the v1 GET_INFO, and the
 * dispatcher's answers to commands it does not know: wrong magic EINVAL,
 * unknown number or size ENOTTY.
 */
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "vmtest.h"

#define ENOTSUPP 524	/* the kernel's internal errno nvidia_p2p_* return */

/* The numbers NVIDIA's library and module use, written out. */
_Static_assert(GDRDRV_IOC_PIN_BUFFER == 0xC028DA01, "PIN_BUFFER");
_Static_assert(GDRDRV_IOC_UNPIN_BUFFER == 0xC008DA02, "UNPIN_BUFFER");
_Static_assert(GDRDRV_IOC_GET_CB_FLAG == 0xC008DA03, "GET_CB_FLAG");
_Static_assert(GDRDRV_IOC_GET_INFO == 0xC008DA04, "GET_INFO");
_Static_assert(GDRDRV_IOC_GET_INFO_V2 == 0xC008DA05, "GET_INFO_V2");
_Static_assert(GDRDRV_IOC_GET_ATTR == 0xC008DA06, "GET_ATTR");
_Static_assert(GDRDRV_IOC_PIN_BUFFER_V2 == 0xC020DA07, "PIN_BUFFER_V2");
_Static_assert(GDRDRV_IOC_REQ_MAPPING_TYPE == 0xC008DA08, "REQ_MAPPING_TYPE");
_Static_assert(GDRDRV_IOC_GET_VERSION == 0xC008DAFF, "GET_VERSION");

static void version(int fd)
{
	struct gdrdrv_get_version_params v;

	memset(&v, 0xff, sizeof(v));
	CHECK_RET(gioctl(fd, 0xC008DAFF, &v), 0);
	CHECK(v.gdrdrv_version == 0x20006, "version %#x", v.gdrdrv_version);
	CHECK(v.minimum_gdr_api_version == 0x20000, "minimum API %#x",
	      v.minimum_gdr_api_version);
}

static void attrs(int fd, int persistent)
{
	uint32_t v;

	CHECK_RET(gdrdrv_attr(fd, GDRDRV_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK(v == (uint32_t)persistent, "USE_PERSISTENT_MAPPING %u", v);
	/* FORCE_PCIE is only offered in persistent mode. */
	CHECK_RET(gdrdrv_attr(fd, GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v),
		  0);
	CHECK(v == (uint32_t)persistent, "SUPPORT_PIN_FLAG_FORCE_PCIE %u in %s mode",
	      v, persistent ? "persistent" : "non-persistent");
	CHECK_RET(gdrdrv_attr(fd, 0, &v), -EINVAL);
	CHECK_RET(gdrdrv_attr(fd, 3, &v), -EINVAL);
	CHECK_RET(gdrdrv_attr(fd, 0xffffffff, &v), -EINVAL);
}

/* Pin through PIN_BUFFER and PIN_BUFFER_V2; query with both GET_INFOs. */
static void pin_and_info(int fd, CUdeviceptr d, int persistent)
{
	struct gdrdrv_pin_buffer_v2_params p2 = {
		.addr = d, .size = 2 * GPU_PAGE,
	};
	struct gdrdrv_pin_buffer_params p1 = {
		.addr = d + 2 * GPU_PAGE, .size = GPU_PAGE,
	};
	struct gdrdrv_get_info_params i1;
	struct gdrdrv_get_info_v2_params i2;
	struct gdrdrv_req_mapping_type_params rq;
	uint32_t flag;
	void *m;

	CHECK_RET(gioctl(fd, 0xC020DA07, &p2), 0);
	CHECK_RET(gioctl(fd, 0xC028DA01, &p1), 0);
	/* As GDRCopy: a fresh fd's first handle is 0, and each pin moves
	 * the next one on by its size in host pages, so that handle <<
	 * PAGE_SHIFT .. + mapped_size never overlap. */
	CHECK(p2.handle == 0, "first handle of a fd %llu, want 0",
	      (unsigned long long)p2.handle);
	CHECK(p1.handle == p2.handle + 2 * GPU_PAGE / sysconf(_SC_PAGESIZE),
	      "second handle %llu after a 128 KiB pin at handle %llu",
	      (unsigned long long)p1.handle, (unsigned long long)p2.handle);

	memset(&i1, 0xee, sizeof(i1));
	i1.handle = p2.handle;
	CHECK_RET(gioctl(fd, 0xC008DA04, &i1), 0);
#if defined(__x86_64__)
	CHECK(i1.tsc_khz != 0, "GET_INFO tsc_khz 0 on x86");
#else
	/* GDRCopy's gdrdrv times get_pages with the TSC only. */
	CHECK(i1.tsc_khz == 0 && i1.tm_cycles == 0,
	      "GET_INFO tsc_khz %u tm_cycles %llu without a TSC", i1.tsc_khz,
	      (unsigned long long)i1.tm_cycles);
#endif
	CHECK(i1.va == d && i1.mapped_size == 2 * GPU_PAGE &&
	      i1.page_size == GPU_PAGE && !i1.mapped && !i1.wc_mapping,
	      "GET_INFO: va %#llx size %llu page %u mapped %u wc %u",
	      (unsigned long long)i1.va, (unsigned long long)i1.mapped_size,
	      i1.page_size, i1.mapped, i1.wc_mapping);

	/* REQ_MAPPING_TYPE: a PCIe BAR that is not RAM, on x86 or on an arm64
	 * host without BlueField's root complex, can only be WC; NONE resets;
	 * 4 is no type. */
	rq = (struct gdrdrv_req_mapping_type_params){ .handle = p2.handle };
	rq.mapping_type = 4;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), -EINVAL);
	rq.mapping_type = GDRDRV_MAPPING_TYPE_CACHING;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), -EOPNOTSUPP);
	rq.mapping_type = GDRDRV_MAPPING_TYPE_DEVICE;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), -EOPNOTSUPP);
	rq.mapping_type = GDRDRV_MAPPING_TYPE_NONE;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), 0);
	rq.mapping_type = GDRDRV_MAPPING_TYPE_WC;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), 0);
	rq.handle = 0xdead0000;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), -EINVAL);

	m = gdrdrv_mmap(fd, p2.handle, 2 * GPU_PAGE);
	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	i1.handle = p2.handle;
	CHECK_RET(gioctl(fd, 0xC008DA04, &i1), 0);
	CHECK(i1.mapped == 1 && i1.wc_mapping == 1,
	      "GET_INFO after mmap: mapped %u wc %u", i1.mapped, i1.wc_mapping);
	CHECK_RET(gdrdrv_info(fd, p2.handle, &i2), 0);
	CHECK(i2.va == d && i2.mapped_size == 2 * GPU_PAGE &&
	      i2.mapping_type == GDRDRV_MAPPING_TYPE_WC,
	      "GET_INFO_V2: va %#llx size %llu type %u",
	      (unsigned long long)i2.va, (unsigned long long)i2.mapped_size,
	      i2.mapping_type);
	rq.handle = p2.handle;
	rq.mapping_type = GDRDRV_MAPPING_TYPE_WC;
	CHECK_RET(gioctl(fd, 0xC008DA08, &rq), -EBUSY);

	CHECK_RET(gdrdrv_cb_flag(fd, p2.handle, &flag), 0);
	CHECK(flag == 0, "callback flag %u on live memory", flag);
	CHECK_RET(gdrdrv_cb_flag(fd, 0xdead0000, &flag), -EINVAL);

	if (m != MAP_FAILED)
		munmap(m, 2 * GPU_PAGE);
	CHECK_RET(gioctl(fd, 0xC008DA02, &p2.handle), 0);
	CHECK_RET(gioctl(fd, 0xC008DA02, &p2.handle), -EINVAL);
	CHECK_RET(gdrdrv_unpin(fd, p1.handle), 0);

	/* Flags: FORCE_PCIE is refused by the (x86 PCIe) GPU in persistent
	 * mode and by gdrdrv in non-persistent mode; others are unknown. */
	p2 = (struct gdrdrv_pin_buffer_v2_params){
		.addr = d, .size = GPU_PAGE,
		.flags = GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE,
	};
	CHECK_RET(gioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p2),
		  persistent ? -ENOTSUPP : -EINVAL);
	p2.flags = 2;
	CHECK_RET(gioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p2), -EINVAL);

	/* Tokens: rejected in persistent mode, and by default otherwise
	 * (allow_p2p_tokens=0; token_pins.c tries them allowed). */
	p1 = (struct gdrdrv_pin_buffer_params){
		.addr = d, .size = GPU_PAGE, .p2p_token = 1, .va_space = 1,
	};
	CHECK_RET(gioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p1),
		  persistent ? -EINVAL : -EPERM);
}

/* Commands the dispatcher must not take. */
static void unknown_commands(int fd)
{
	uint64_t buf[8] = { 0 };

	/* Wrong magic: EINVAL, whatever the rest. */
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDB, 0xff, 8), buf),
		  -EINVAL);
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0x00, 1, 40), buf),
		  -EINVAL);
	/* Our magic, unknown numbers. */
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDA, 0, 8), buf),
		  -ENOTTY);
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDA, 9, 8), buf),
		  -ENOTTY);
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDA, 0xfe, 8), buf),
		  -ENOTTY);
	/* Known numbers with the struct's size encoded instead of the
	 * pointer's (or the other way round): the whole value must match. */
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDA, 4, 48), buf),
		  -ENOTTY);
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ, 0xDA, 0xff, 8), buf), -ENOTTY);
	CHECK_RET(gioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, 0xDA, 1, 8), buf),
		  -ENOTTY);
	/* A bad argument pointer. */
	CHECK_RET(gioctl(fd, GDRDRV_IOC_GET_VERSION, NULL), -EFAULT);
	CHECK_RET(gioctl(fd, GDRDRV_IOC_GET_INFO_V2, (void *)16), -EFAULT);
}

/* Only minor 0 is gdrdrv. */
static void other_minor(void)
{
	struct stat st;
	int fd;

	if (stat(GDRDRV_DEVICE_PATH, &st) || mknod("/tmp/gdrdrv1",
						   S_IFCHR | 0600,
						   makedev(major(st.st_rdev),
							   1))) {
		SKIP("cannot make a minor-1 node: %s", strerror(errno));
		return;
	}
	fd = open("/tmp/gdrdrv1", O_RDWR);
	CHECK(fd < 0 && errno == ENXIO, "open of minor 1: %s",
	      fd < 0 ? strerror(errno) : "succeeded");
	if (fd >= 0)
		close(fd);
	unlink("/tmp/gdrdrv1");
}

int main(void)
{
	CUdeviceptr d;
	int fd, persistent;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	d = vm_alloc(4 * GPU_PAGE);
	gpu_fill(d, 4 * GPU_PAGE, 7);

	version(fd);
	attrs(fd, persistent);
	pin_and_info(fd, d, persistent);
	unknown_commands(fd);
	other_minor();

	CU_OK(cuMemFree(d));
	close(fd);
	return test_done();
}
