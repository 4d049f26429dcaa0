// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: gdrmap's simulated GPU.  NOT REAL HARDWARE.
 *
 * Binds to every QEMU ivshmem-plain PCI device (up to NVSIM_MAX_DEVICES),
 * each one simulated GPU whose memory is the device's BAR2 (shared
 * memory), in 64 KiB pages.  Exports the nvidia_p2p_* kernel
 * API over that memory (nvsim_p2p.c) and hands the memory out to user
 * space through /dev/nvsim (nvsim_cdev.c), for gdrmap's libcuda shim.
 *
 * This file: loading and unloading, and the PCI driver that makes a GPU
 * of each device (nvsim_gpu.c) and its /proc directory (nvsim_proc.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/module.h>
#include <linux/pci.h>

#include "nvsim.h"

#define PCI_VENDOR_ID_IVSHMEM	0x1af4
#define PCI_DEVICE_ID_IVSHMEM	0x1110

static int nvsim_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct nvsim_dev *gpu = nvsim_gpu_add(pdev);

	if (IS_ERR(gpu))
		return PTR_ERR(gpu);
	pci_set_drvdata(pdev, gpu);
	nvsim_proc_gpu_add(gpu);

	dev_info(&pdev->dev,
		 "simulated GPU %u (not real hardware): BAR%d at %pa, %llu MiB, %lu pages of 64 KiB, uuid GPU-%pUb\n",
		 gpu->index, NVSIM_BAR, &gpu->bar_phys, gpu->bar_size >> 20,
		 gpu->npages, gpu->uuid);
	return 0;
}

static void nvsim_remove(struct pci_dev *pdev)
{
	struct nvsim_dev *gpu = pci_get_drvdata(pdev);

	nvsim_proc_gpu_remove(gpu);
	nvsim_gpu_remove(gpu);
}

static const struct pci_device_id nvsim_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_IVSHMEM, PCI_DEVICE_ID_IVSHMEM) },
	{ }
};
MODULE_DEVICE_TABLE(pci, nvsim_pci_ids);

static struct pci_driver nvsim_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = nvsim_pci_ids,
	.probe = nvsim_probe,
	.remove = nvsim_remove,
	.driver.suppress_bind_attrs = true,
};

static int __init nvsim_init(void)
{
	int ret;

	pr_info("gdrmap simulated GPU (not real hardware) loading; nvidia_p2p_* here are a simulation\n");

	/* The GPUs' own /proc directories go into it as they are probed. */
	nvsim_proc_init();
	ret = pci_register_driver(&nvsim_pci_driver);
	if (ret)
		goto err_proc;
	ret = nvsim_cdev_register();
	if (ret)
		goto err_pci;

	mutex_lock(&nvsim_lock);
	if (!nvsim_gpu_count())
		pr_info("no ivshmem-plain device (1af4:1110) found; /dev/nvsim will report ENODEV\n");
	mutex_unlock(&nvsim_lock);
	return 0;

err_pci:
	pci_unregister_driver(&nvsim_pci_driver);
err_proc:
	nvsim_proc_exit();
	return ret;
}

static void __exit nvsim_exit(void)
{
	struct nvsim_snapshot s;

	nvsim_cdev_unregister();

	/*
	 * Open fds hold the module, so only persistent pins can be left:
	 * a client (gdrdrv) leaked them.
	 */
	mutex_lock(&nvsim_lock);
	nvsim_snapshot_locked(NULL, &s);
	WARN(s.c.outstanding_pins || s.c.pinned_pages,
	     "nvsim: unloading with %lu outstanding pins (%lu pages)\n",
	     s.c.outstanding_pins, s.c.pinned_pages);
	nvsim_free_leftover_pins();
	mutex_unlock(&nvsim_lock);

	pci_unregister_driver(&nvsim_pci_driver);
	nvsim_proc_exit();
	pr_info("simulated GPU unloaded\n");
}

module_init(nvsim_init);
module_exit(nvsim_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_AUTHOR("gdrmap");
MODULE_DESCRIPTION("gdrmap simulated GPU: nvidia_p2p_* over a QEMU ivshmem BAR (not real hardware)");
MODULE_VERSION("1.0");
