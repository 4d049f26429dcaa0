// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ioctl commands of /dev/gdrdrv, one function each.
 *
 * Each copies its whole argument struct in (whatever size the command
 * number encodes, see gdrdrv_ioctl.h), validates it, acts, and copies the
 * struct back.  No user memory is touched with a lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uaccess.h>

#include "gdrdrv.h"

#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

static u32 gdrdrv_tsc_khz(void)
{
#ifdef CONFIG_X86
	return cpu_khz;
#else
	return 0;
#endif
}

/* Copies the new handle out, or undoes the pin if that fails. */
static long gdrdrv_pin_copy_out(struct gdrdrv_file *f, void __user *argp,
				const void *params, size_t size, u64 handle)
{
	if (copy_to_user(argp, params, size)) {
		gdrdrv_unpin(f, handle);
		return -EFAULT;
	}
	return 0;
}

static long gdrdrv_ioctl_pin_buffer(struct gdrdrv_file *f,
				    void __user *argp)
{
	struct gdrdrv_pin_buffer_params p;
	struct gdrdrv_pin_req req;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	req = (struct gdrdrv_pin_req) {
		.addr = p.addr,
		.size = p.size,
		.p2p_token = p.p2p_token,
		.va_space = p.va_space,
		.flags = GDRDRV_PIN_BUFFER_FLAG_DEFAULT,
	};
	ret = gdrdrv_pin(f, &req, &p.handle);
	if (ret)
		return ret;
	return gdrdrv_pin_copy_out(f, argp, &p, sizeof(p), p.handle);
}

static long gdrdrv_ioctl_pin_buffer_v2(struct gdrdrv_file *f,
				       void __user *argp)
{
	struct gdrdrv_pin_buffer_v2_params p;
	struct gdrdrv_pin_req req;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	req = (struct gdrdrv_pin_req) {
		.addr = p.addr,
		.size = p.size,
		.flags = p.flags,
	};
	ret = gdrdrv_pin(f, &req, &p.handle);
	if (ret)
		return ret;
	return gdrdrv_pin_copy_out(f, argp, &p, sizeof(p), p.handle);
}

static long gdrdrv_ioctl_unpin_buffer(struct gdrdrv_file *f,
				      void __user *argp)
{
	struct gdrdrv_unpin_buffer_params p;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	return gdrdrv_unpin(f, p.handle);
}

static long gdrdrv_ioctl_get_cb_flag(struct gdrdrv_file *f,
				     void __user *argp)
{
	struct gdrdrv_get_cb_flag_params p;
	struct gdrdrv_region *r;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;

	mutex_lock(&f->lock);
	r = gdrdrv_region_lookup(f, p.handle);
	if (r) {
		mutex_lock(&r->lock);
		p.flag = r->cb_fired;
		mutex_unlock(&r->lock);
	}
	mutex_unlock(&f->lock);
	if (!r)
		return -EINVAL;

	if (copy_to_user(argp, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

/* GET_INFO_V2's answer for p->handle, read under the fd lock. */
static int gdrdrv_get_info(struct gdrdrv_file *f,
			   struct gdrdrv_get_info_v2_params *p)
{
	struct gdrdrv_region *r;

	mutex_lock(&f->lock);
	r = gdrdrv_region_lookup(f, p->handle);
	if (r) {
		p->va = r->va;
		p->mapped_size = r->size;
		p->page_size = GDRDRV_GPU_PAGE_SIZE;
		p->tsc_khz = gdrdrv_tsc_khz();
		p->tm_cycles = r->tm_cycles;
		/*
		 * A mapping the free callback zapped is dead, as GDRCopy
		 * reports it: how a caller learns that it must not use it.
		 */
		mutex_lock(&r->lock);
		p->mapping_type = atomic_read(&r->map_count) && !r->cb_fired ?
			r->map_type : GDRDRV_MAPPING_TYPE_NONE;
		mutex_unlock(&r->lock);
	}
	mutex_unlock(&f->lock);
	return r ? 0 : -EINVAL;
}

static long gdrdrv_ioctl_get_info(struct gdrdrv_file *f, void __user *argp)
{
	struct gdrdrv_get_info_params p;
	struct gdrdrv_get_info_v2_params v2;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	v2.handle = p.handle;
	ret = gdrdrv_get_info(f, &v2);
	if (ret)
		return ret;

	p.va = v2.va;
	p.mapped_size = v2.mapped_size;
	p.page_size = v2.page_size;
	p.tsc_khz = v2.tsc_khz;
	p.tm_cycles = v2.tm_cycles;
	p.mapped = v2.mapping_type != GDRDRV_MAPPING_TYPE_NONE;
	p.wc_mapping = v2.mapping_type == GDRDRV_MAPPING_TYPE_WC;
	if (copy_to_user(argp, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

static long gdrdrv_ioctl_get_info_v2(struct gdrdrv_file *f,
				     void __user *argp)
{
	struct gdrdrv_get_info_v2_params p;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	ret = gdrdrv_get_info(f, &p);
	if (ret)
		return ret;
	if (copy_to_user(argp, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

static long gdrdrv_ioctl_get_attr(void __user *argp)
{
	struct gdrdrv_get_attr_params p;
	long ret = 0;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;

	switch (p.attr) {
	case GDRDRV_ATTR_USE_PERSISTENT_MAPPING:
		p.val = gdrdrv_persistent;
		break;
	case GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
		p.val = gdrdrv_persistent && GDRDRV_HAVE_FORCE_BAR1;
		break;
	default:
		ret = -EINVAL;	/* the struct still goes back, as GDRCopy's */
		break;
	}
	if (copy_to_user(argp, &p, sizeof(p)))
		return -EFAULT;
	return ret;
}

static long gdrdrv_ioctl_req_mapping_type(struct gdrdrv_file *f,
					  void __user *argp)
{
	struct gdrdrv_req_mapping_type_params p;
	struct gdrdrv_region *r;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	if (p.mapping_type > GDRDRV_MAPPING_TYPE_DEVICE)
		return -EINVAL;

	mutex_lock(&f->lock);
	r = gdrdrv_region_lookup(f, p.handle);
	if (!r)
		ret = -EINVAL;
	else if (atomic_read(&r->map_count))
		ret = -EBUSY;
	else
		ret = gdrdrv_check_mapping_type(r, p.mapping_type);
	if (!ret)
		r->req_type = p.mapping_type;	/* applied at the next mmap */
	mutex_unlock(&f->lock);
	return ret;
}

static long gdrdrv_ioctl_get_version(void __user *argp)
{
	struct gdrdrv_get_version_params p = {
		.gdrdrv_version = GDRDRV_VERSION,
		.minimum_gdr_api_version = GDRDRV_MINIMUM_API_VERSION,
	};

	if (copy_to_user(argp, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

long gdrdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gdrdrv_file *f = filp->private_data;
	void __user *argp = (void __user *)arg;

	if (!f)
		return -EIO;
	if (!gdrdrv_file_owned_by_current(f))
		return -EACCES;
	if (_IOC_TYPE(cmd) != GDRDRV_IOC_MAGIC)
		return -EINVAL;

	switch (cmd) {
	case GDRDRV_IOC_PIN_BUFFER:
		return gdrdrv_ioctl_pin_buffer(f, argp);
	case GDRDRV_IOC_PIN_BUFFER_V2:
		return gdrdrv_ioctl_pin_buffer_v2(f, argp);
	case GDRDRV_IOC_UNPIN_BUFFER:
		return gdrdrv_ioctl_unpin_buffer(f, argp);
	case GDRDRV_IOC_GET_CB_FLAG:
		return gdrdrv_ioctl_get_cb_flag(f, argp);
	case GDRDRV_IOC_GET_INFO:
		return gdrdrv_ioctl_get_info(f, argp);
	case GDRDRV_IOC_GET_INFO_V2:
		return gdrdrv_ioctl_get_info_v2(f, argp);
	case GDRDRV_IOC_GET_ATTR:
		return gdrdrv_ioctl_get_attr(argp);
	case GDRDRV_IOC_REQ_MAPPING_TYPE:
		return gdrdrv_ioctl_req_mapping_type(f, argp);
	case GDRDRV_IOC_GET_VERSION:
		return gdrdrv_ioctl_get_version(argp);
	default:
		return -ENOTTY;
	}
}
