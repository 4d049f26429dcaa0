/* SPDX-License-Identifier: MIT */
/*
 * libgdrapi's own API through the real module: gdr_open picks the gdrdrv
 * backend; pins at unaligned addresses and sizes, maps, copies both ways
 * (checked byte for byte through cuMemcpy, and the bytes around the range
 * untouched), info, attributes, versions, the errors of misuse, and
 * gdr_close releasing what was left pinned.
 */
#include "gdrapi.h"
#include "vmtest.h"

static gdr_t g;
static int persistent;

static void versions(void)
{
	int major = -1, minor = -1, v;

	gdr_runtime_get_version(&major, &minor);
	CHECK(major == 2 && minor == 6, "runtime version %d.%d", major,
	      minor);
	CHECK_RET(gdr_driver_get_version(g, &major, &minor), 0);
	CHECK(major == 2 && minor == 6, "driver version %d.%d", major, minor);

	CHECK_RET(gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &v), 0);
	CHECK(v == GDRMAP_BACKEND_GDRDRV, "backend %d, want gdrdrv", v);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK(v == persistent, "USE_PERSISTENT_MAPPING %d, module says %d", v,
	      persistent);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	CHECK(v == 0, "USING_DMA_BUF_MMAP %d with gdrdrv", v);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE,
				    &v), 0);
	if (!persistent)
		CHECK(v == 0, "FORCE_PCIE supported in non-persistent mode");
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	CHECK_RET(gdr_get_attribute(g, (gdr_attr_t)0, &v), EINVAL);
}

/*
 * Pin [d + off, + n) of an allocation of alloc bytes, map, copy to and
 * from the mapping with a host buffer at host_off, check every byte.
 */
static void range(size_t alloc, size_t off, size_t n, size_t host_off,
		  unsigned seed)
{
	uint8_t *host = malloc(n + host_off), *all = malloc(alloc);
	const char *type = NULL;
	CUdeviceptr d;
	gdr_info_t info;
	gdr_mh_t mh;
	void *base, *base2;
	char *p;
	long bad;

	REQUIRE(host && all, "malloc");
	d = vm_alloc(alloc);
	gpu_fill(d, alloc, seed);
	CHECK_RET(gdr_pin_buffer(g, d + off, n, 0, 0, &mh), 0);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(info.va <= d + off && info.va % GPU_PAGE_SIZE == 0 &&
	      info.va + info.mapped_size >= d + off + n &&
	      info.mapped_size % GPU_PAGE_SIZE == 0 && !info.mapped,
	      "info: va %#llx size %#llx mapped %d for %#llx + %#zx",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size, info.mapped,
	      (unsigned long long)(d + off), n);
	CHECK_RET(gdr_map(g, mh, &base, n), 0);
	CHECK_RET(gdr_map(g, mh, &base2, n), EAGAIN);
	CHECK_RET(gdr_unpin_buffer(g, mh), EBUSY);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(info.mapped && info.wc_mapping &&
	      info.mapping_type == GDR_MAPPING_TYPE_WC,
	      "after map: mapped %d wc %d type %d", info.mapped,
	      info.wc_mapping, info.mapping_type);
	CHECK_RET(gdr_get_mapping_type_string(info.mapping_type, &type), 0);
	CHECK(type && !strcmp(type, "Write Combining"), "type string %s",
	      type ? type : "(null)");
	p = (char *)base + (d + off - info.va);

	/* Host -> mapping: the range changes, nothing around it does. */
	fill_pattern(host + host_off, n, seed + 1);
	CHECK_RET(gdr_copy_to_mapping(mh, p, host + host_off, n), 0);
	CU_OK(cuMemcpyDtoH(all, d, alloc));
	bad = find_mismatch(all + off, n, seed + 1);
	CHECK(bad < 0, "copy_to_mapping %#zx@%#zx: GPU differs at +%#lx", n,
	      off, bad);
	bad = find_mismatch(all, off, seed);
	CHECK(bad < 0, "copy_to_mapping wrote before its range, at %#lx",
	      bad);
	for (size_t i = off + n; i < alloc; i++)
		if (all[i] != pattern_byte(i, seed)) {
			CHECK(0, "copy_to_mapping wrote after its range, at %#zx",
			      i);
			break;
		}

	/* Mapping -> host: exactly what the GPU holds, nothing more. */
	gpu_fill(d + off, n, seed + 2);
	memset(host, 0x3c, n + host_off);
	CHECK_RET(gdr_copy_from_mapping(mh, host + host_off, p, n), 0);
	bad = find_mismatch(host + host_off, n, seed + 2);
	CHECK(bad < 0, "copy_from_mapping %#zx@%#zx differs at +%#lx", n, off,
	      bad);
	for (size_t i = 0; i < host_off; i++)
		CHECK(host[i] == 0x3c, "copy_from_mapping wrote before dst");

	/* Copies that leave the mapping are refused. */
	CHECK_RET(gdr_copy_to_mapping(mh, (char *)base + info.mapped_size,
				      host, 1), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, host, (char *)base - 1, 1), EINVAL);

	CHECK_RET(gdr_unmap(g, mh, base, n), 0);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(!info.mapped, "mapped after unmap");
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), EINVAL);
	CU_OK(cuMemFree(d));
	free(host);
	free(all);
}

static void flags_and_errors(void)
{
	CUdeviceptr d = vm_alloc(4 * GPU_PAGE), gone = vm_alloc(GPU_PAGE);
	gdr_mh_t mh;
	void *base;
	int flag = 7;

	CU_OK(cuMemFree(gone));
	CHECK_RET(gdr_pin_buffer(g, d, 0, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, 0, GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, gone, GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, d, ~0UL - d + 2, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer_v2(g, d, GPU_PAGE, 4, &mh), EINVAL);
	CHECK(gdr_pin_buffer_v2(g, d, GPU_PAGE, GDR_PIN_FLAG_FORCE_PCIE,
				&mh) != 0,
	      "FORCE_PCIE pinned on an x86 PCIe GPU");

	CHECK_RET(gdr_pin_buffer_v2(g, d, 4 * GPU_PAGE, 0, &mh), 0);
	CHECK_RET(gdr_get_callback_flag(g, mh, &flag), 0);
	CHECK(flag == 0, "callback flag %d on live memory", flag);
	/* A type the platform cannot give: EOPNOTSUPP, as GDRCopy. */
	CHECK_RET(gdr_map_v2(g, mh, &base, GPU_PAGE,
			     GDR_MAP_FLAG_REQ_CACHE_MAPPING), EOPNOTSUPP);
	CHECK_RET(gdr_map_v2(g, mh, &base, GPU_PAGE,
			     GDR_MAP_FLAG_REQ_DEVICE_MAPPING), EOPNOTSUPP);
	CHECK_RET(gdr_map_v2(g, mh, &base, GPU_PAGE, 99), EINVAL);
	CHECK_RET(gdr_map_v2(g, mh, &base, 4 * GPU_PAGE + 1, 0), EINVAL);
	CHECK_RET(gdr_map_v2(g, mh, &base, 4 * GPU_PAGE,
			     GDR_MAP_FLAG_REQ_WC_MAPPING), 0);
	CHECK_RET(gdr_unmap(g, mh, base, 4 * GPU_PAGE), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CU_OK(cuMemFree(d));
}

/* Memory freed under a pin: the flag in non-persistent mode, and the
 * handle still unmaps and unpins cleanly in either mode. */
static void freed_under_pin(void)
{
	CUdeviceptr d = vm_alloc(2 * GPU_PAGE);
	gdr_mh_t mh;
	void *base;
	int flag = 7;

	CHECK_RET(gdr_pin_buffer(g, d, 2 * GPU_PAGE, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, &base, 2 * GPU_PAGE), 0);
	CU_OK(cuMemFree(d));
	CHECK_RET(gdr_get_callback_flag(g, mh, &flag), 0);
	CHECK(flag == !persistent, "callback flag %d after cuMemFree", flag);
	CHECK_RET(gdr_unmap(g, mh, base, 2 * GPU_PAGE), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
}

/* gdr_close unmaps and unpins whatever is left. */
static void close_with_pins(void)
{
	long pins0 = nvsim_count("outstanding_pins");
	CUdeviceptr d = vm_alloc(8 * GPU_PAGE);
	gdr_mh_t a, b;
	void *base;

	CHECK_RET(gdr_pin_buffer(g, d, 4 * GPU_PAGE, 0, 0, &a), 0);
	CHECK_RET(gdr_pin_buffer(g, d + 4 * GPU_PAGE + 5, 100, 0, 0, &b), 0);
	CHECK_RET(gdr_map(g, a, &base, 4 * GPU_PAGE), 0);
	CHECK(nvsim_count("outstanding_pins") == pins0 + 2,
	      "outstanding_pins %ld with two pins",
	      nvsim_count("outstanding_pins"));
	CHECK_RET(gdr_close(g), 0);
	g = NULL;
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "outstanding_pins %ld after gdr_close, was %ld",
	      nvsim_count("outstanding_pins"), pins0);
	CU_OK(cuMemFree(d));
}

int main(void)
{
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	g = gdr_open();
	REQUIRE(g, "gdr_open failed: %s", strerror(errno));

	versions();
	range(64 * KiB, 0, 64 * KiB, 0, 1);
	range(1000, 0, 1000, 3, 2);		/* sub-allocated: +0x200 */
	range(1 * MiB, 1, 1, 0, 3);
	range(1 * MiB, 65535, 2, 1, 4);		/* straddles a GPU page */
	range(1 * MiB, 4095, 300 * KiB + 17, 7, 5);
	range(4 * MiB, 2 * MiB - 64, 2 * MiB + 64, 13, 6);
	range(192 * KiB, 64 * KiB + 8, 128 * KiB - 8, 0, 7);
	flags_and_errors();
	freed_under_pin();
	close_with_pins();
	return test_done();
}
