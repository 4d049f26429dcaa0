// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vma->vm_flags is read-only and set through vm_flags_init() and friends
 * (6.3, and backports such as RHEL 9.5's 5.14).
 */
#include <linux/mm.h>

void conftest(struct vm_area_struct *vma);
void conftest(struct vm_area_struct *vma)
{
	vm_flags_init(vma, vma->vm_flags | VM_IO);
}
