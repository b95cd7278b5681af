/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the one place where ib_core API differences between the kernels
 * we build for (6.1 and 6.12) are handled.  Nothing else in the driver
 * looks at the kernel version.
 */
#ifndef SHCA_COMPAT_H
#define SHCA_COMPAT_H

#include <linux/mm.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Since 6.11 ib_device_ops.create_cq takes the uverbs attribute bundle
 * instead of the driver udata; kernel callers pass NULL.
 * SHCA_HAVE_CREATE_CQ_ATTRS comes from a header test in Kbuild.
 */
#ifdef SHCA_HAVE_CREATE_CQ_ATTRS
#define SHCA_CREATE_CQ_ARG struct uverbs_attr_bundle

static inline struct ib_udata *shca_create_cq_udata(SHCA_CREATE_CQ_ARG *arg)
{
	return arg ? &arg->driver_udata : NULL;
}
#else
#define SHCA_CREATE_CQ_ARG struct ib_udata

static inline struct ib_udata *shca_create_cq_udata(SHCA_CREATE_CQ_ARG *arg)
{
	return arg;
}
#endif

/*
 * Since 6.3 a VMA's flags are changed only through vm_flags_*().
 * SHCA_HAVE_VM_FLAGS_CLEAR comes from a header test in Kbuild.
 */
static inline void shca_vma_clear_flags(struct vm_area_struct *vma,
					unsigned long flags)
{
#ifdef SHCA_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * The work completion opcode of an ATOMIC WRITE.  The uapi value
 * (IB_UVERBS_WC_ATOMIC_WRITE) exists since 6.2; 6.1 lacks the name.
 * SHCA_HAVE_WC_ATOMIC_WRITE comes from a header test in Kbuild.
 */
#define SHCA_WC_ATOMIC_WRITE	9
#ifdef SHCA_HAVE_WC_ATOMIC_WRITE
static_assert(SHCA_WC_ATOMIC_WRITE == IB_UVERBS_WC_ATOMIC_WRITE);
/* ... and the device capability that announces it */
#define SHCA_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SHCA_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * FLUSH (IBTA 1.5 Memory Placement Extensions): the work request, its
 * completion opcode (IB_UVERBS_WC_FLUSH) and the device capabilities
 * exist since 6.2; 6.1 has none of them, and there shca has no FLUSH (a
 * FLUSH WQE completes with a local QP operation error, a FLUSH request
 * is NAKed as invalid, nothing is advertised).  SHCA_HAVE_FLUSH comes
 * from a header test in Kbuild.
 *
 * The QP and MR permissions, IB_ACCESS_FLUSH_GLOBAL and
 * IB_ACCESS_FLUSH_PERSISTENT, are bits 8 and 9 on both kernels (6.1
 * lacks the names, uverbs passes the bits through on QPs): rdma-core
 * 56's pyverbs suite grants both on every RC QP it makes.  shca places
 * data with the CPU into ordinary memory and has no persistence domain,
 * so it offers global visibility only: FLUSH_GLOBAL is advertised and
 * honoured, FLUSH_PERSISTENT is never advertised and no MR can carry it.
 */
#define SHCA_WC_FLUSH			8
#define SHCA_ACCESS_FLUSH_GLOBAL	BIT(8)
#define SHCA_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define SHCA_ACCESS_FLUSH	(SHCA_ACCESS_FLUSH_GLOBAL | \
				 SHCA_ACCESS_FLUSH_PERSISTENT)
#ifdef SHCA_HAVE_FLUSH
#define SHCA_FLUSH_SUPPORTED		true
#define SHCA_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
/* what an MR may be granted besides the classic bits */
#define SHCA_MR_ACCESS_FLUSH		SHCA_ACCESS_FLUSH_GLOBAL
static_assert(SHCA_WC_FLUSH == IB_UVERBS_WC_FLUSH);
static_assert(SHCA_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
static_assert(SHCA_ACCESS_FLUSH_PERSISTENT == IB_ACCESS_FLUSH_PERSISTENT);
#else
#define SHCA_FLUSH_SUPPORTED		false
#define SHCA_DEVICE_FLUSH_GLOBAL	0
#define SHCA_MR_ACCESS_FLUSH		0
#endif

/*
 * get_user_pages_remote() of @n pages of @mm from @addr, referenced;
 * mmap_read_lock(@mm) held.  Since 6.5 it takes no vmas argument.
 * SHCA_HAVE_GUP_VMAS comes from a header test in Kbuild.
 */
static inline long shca_gup_remote(struct mm_struct *mm, unsigned long addr,
				   unsigned long n, unsigned int gup_flags,
				   struct page **pages)
{
#ifdef SHCA_HAVE_GUP_VMAS
	return get_user_pages_remote(mm, addr, n, gup_flags, pages, NULL, NULL);
#else
	return get_user_pages_remote(mm, addr, n, gup_flags, pages, NULL);
#endif
}

/*
 * Does a tc program or classifier sit on @dev's ingress or egress?  Since
 * 6.6 both hang off tcx entries; before, classic tc had mini qdiscs.
 * SHCA_HAVE_TCX comes from a header test in Kbuild.  RCU held.
 */
static inline bool shca_dev_has_tc(const struct net_device *dev)
{
#if defined(SHCA_HAVE_TCX) && IS_ENABLED(CONFIG_NET_XGRESS)
	return rcu_access_pointer(dev->tcx_ingress) ||
	       rcu_access_pointer(dev->tcx_egress);
#elif !defined(SHCA_HAVE_TCX) && IS_ENABLED(CONFIG_NET_CLS_ACT)
	return rcu_access_pointer(dev->miniq_ingress) ||
	       rcu_access_pointer(dev->miniq_egress);
#else
	return false;
#endif
}

/* Netfilter hooks of the netdev family on @dev (nftables ingress/egress). */
static inline bool shca_dev_has_nf(const struct net_device *dev)
{
	bool hooks = false;

#ifdef CONFIG_NETFILTER_INGRESS
	hooks |= !!rcu_access_pointer(dev->nf_hooks_ingress);
#endif
#ifdef CONFIG_NETFILTER_EGRESS
	hooks |= !!rcu_access_pointer(dev->nf_hooks_egress);
#endif
	return hooks;
}

#endif /* SHCA_COMPAT_H */
