// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The /dev/gdrdrv character device: a dynamic major registered with
 * register_chrdev() (so /proc/devices lists "gdrdrv" for old mknod
 * scripts), and a class device so that devtmpfs and udev create the node.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "compat.h"
#include "gdrdrv.h"

static int gdrdrv_major;
static umode_t gdrdrv_dev_mode;
static kgid_t gdrdrv_dev_gid;

#ifndef GDRDRV_NV_PROPRIETARY
static struct class *gdrdrv_class;
static struct device *gdrdrv_device;

/* What devtmpfs gives the node (udev may change it afterwards). */
static char *gdrdrv_devnode(GDRDRV_DEVNODE_CONST struct device *dev,
			    umode_t *mode, kuid_t *uid, kgid_t *gid)
{
	if (mode)
		*mode = gdrdrv_dev_mode;
	if (gid)
		*gid = gdrdrv_dev_gid;
	return NULL;
}

static const struct device_type gdrdrv_device_type = {
	.name = GDRDRV_NAME,
	.devnode = gdrdrv_devnode,
};

static void gdrdrv_device_release(struct device *dev)
{
	kfree(dev);
}

/* device_create() without its choice of type, which sets the node's group. */
static int gdrdrv_device_create(void)
{
	int ret;

	gdrdrv_class = gdrdrv_class_create(GDRDRV_NAME);
	if (IS_ERR(gdrdrv_class))
		return PTR_ERR(gdrdrv_class);

	gdrdrv_device = kzalloc(sizeof(*gdrdrv_device), GFP_KERNEL);
	if (!gdrdrv_device) {
		ret = -ENOMEM;
		goto destroy_class;
	}
	device_initialize(gdrdrv_device);
	gdrdrv_device->devt = MKDEV(gdrdrv_major, 0);
	gdrdrv_device->class = gdrdrv_class;
	gdrdrv_device->type = &gdrdrv_device_type;
	gdrdrv_device->release = gdrdrv_device_release;
	ret = dev_set_name(gdrdrv_device, GDRDRV_NAME);
	if (!ret)
		ret = device_add(gdrdrv_device);
	if (ret)
		goto put_device;
	return 0;

put_device:
	put_device(gdrdrv_device);
destroy_class:
	class_destroy(gdrdrv_class);
	return ret;
}

static void gdrdrv_device_destroy(void)
{
	device_unregister(gdrdrv_device);
	class_destroy(gdrdrv_class);
}
#else
/*
 * The driver core's class and device calls are GPL-only exports, which a
 * module using the proprietary nvidia.ko's symbols may not call: the node
 * is made from /proc/devices by a script, as with GDRCopy, which gives it
 * its mode and group (main.c refuses dev_mode and dev_gid here).
 */
static int gdrdrv_device_create(void)
{
	pr_info("create the node: mknod /dev/gdrdrv c %d 0\n", gdrdrv_major);
	return 0;
}

static void gdrdrv_device_destroy(void)
{
}
#endif

int gdrdrv_node_create(unsigned int dev_mode, unsigned int dev_gid)
{
	int ret;

	gdrdrv_dev_mode = dev_mode;
	gdrdrv_dev_gid = KGIDT_INIT(dev_gid);
	ret = register_chrdev(0, GDRDRV_NAME, &gdrdrv_fops);
	if (ret < 0) {
		pr_err("register_chrdev failed: %d\n", ret);
		return ret;
	}
	gdrdrv_major = ret;

	ret = gdrdrv_device_create();
	if (ret) {
		pr_err("creating the device failed: %d\n", ret);
		goto unregister_chrdev;
	}
	return 0;

unregister_chrdev:
	unregister_chrdev(gdrdrv_major, GDRDRV_NAME);
	return ret;
}

void gdrdrv_node_destroy(void)
{
	gdrdrv_device_destroy();
	unregister_chrdev(gdrdrv_major, GDRDRV_NAME);
}
