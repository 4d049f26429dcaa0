// SPDX-License-Identifier: GPL-2.0 OR MIT
/* vmf_insert_pfn_prot() returns a vm_fault_t (4.20). */
#include <linux/mm.h>

vm_fault_t conftest(struct vm_area_struct *vma, unsigned long pfn);
vm_fault_t conftest(struct vm_area_struct *vma, unsigned long pfn)
{
	return vmf_insert_pfn_prot(vma, vma->vm_start, pfn, vma->vm_page_prot);
}
