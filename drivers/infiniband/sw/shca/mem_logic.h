/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: pure rules of memory registration - fast registration page
 * translation and memory window bind validation.  No device state;
 * kunit/shca_kunit_mem.c tests these exact functions.
 */
#ifndef SHCA_MEM_LOGIC_H
#define SHCA_MEM_LOGIC_H

#include <linux/errno.h>
#include <linux/overflow.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

/* Access bits a window may be bound with (LOCAL_WRITE is ignored). */
#define SHCA_MW_BIND_ACCESS	(IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_LOCAL_WRITE)

/* Is [addr, addr + len) inside [base, base + size)? */
static inline bool shca_range_inside(u64 addr, u64 len, u64 base, u64 size)
{
	u64 end, lim;

	if (check_add_overflow(addr, len, &end) ||
	    check_add_overflow(base, size, &lim))
		return false;
	return addr >= base && end <= lim;
}

/**
 * shca_frmr_xlate - where byte @addr of a fast registration lives
 * @iova: first byte of the registration (ib_sg_to_pages() puts its page
 *	  at index 0, so @iova may sit anywhere inside that page)
 * @shift: log2 of the page size
 * @npages: entries in the page list
 * @addr: the byte wanted
 * @idx: page list index, on success
 * @off: offset inside that page, on success
 *
 * Return: false if @addr is not covered by the page list.
 */
static inline bool shca_frmr_xlate(u64 iova, unsigned int shift, u32 npages,
				   u64 addr, u32 *idx, u32 *off)
{
	u64 base = iova & ~((1ULL << shift) - 1);
	u64 rel;

	if (shift < 12 || shift > 31 || addr < base)
		return false;
	rel = addr - base;
	if ((rel >> shift) >= npages)
		return false;
	*idx = rel >> shift;
	*off = rel & ((1ULL << shift) - 1);
	return true;
}

/* What a bind request and the objects it names look like. */
struct shca_bind_req {
	enum ib_mw_type type;
	bool bound;		/* the window is currently valid */
	u32 cur_rkey;		/* the window's current R_Key */
	u32 wqe_mw_rkey;	/* type 1: R_Key the WQE names the window by */
	u32 new_rkey;
	bool pd_ok;		/* window, MR and QP share one PD */
	int mr_access;
	u64 mr_iova;
	u64 mr_length;
	u64 addr;
	u64 length;
	int access;
};

/**
 * shca_mw_bind_check - IBTA bind rules (10.6.7.2) as shca implements them
 * @b: the request
 *
 * Type 1 windows are named by their current R_Key; a zero length unbinds
 * them and is checked no further.  Type 2B windows must be free.  The new
 * R_Key keeps the index and changes only the key byte.  The MR must allow
 * binding, and local write if the window grants remote write or atomic;
 * the window must lie inside the MR.  Zero-based windows are not
 * supported.
 *
 * Return: 0, -EINVAL for a malformed request, -EACCES for a PD or
 * access violation, -ERANGE for a window outside the MR.
 */
static inline int shca_mw_bind_check(const struct shca_bind_req *b)
{
	if (b->access & ~SHCA_MW_BIND_ACCESS)
		return -EINVAL;
	if ((b->new_rkey >> 8) != (b->cur_rkey >> 8))
		return -EINVAL;
	if (b->type == IB_MW_TYPE_1) {
		if (b->wqe_mw_rkey != b->cur_rkey)
			return -EINVAL;
		if (!b->length)
			return 0;
	} else if (b->type != IB_MW_TYPE_2 || b->bound) {
		return -EINVAL;
	}
	if (!b->pd_ok || !(b->mr_access & IB_ACCESS_MW_BIND))
		return -EACCES;
	if ((b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(b->mr_access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!shca_range_inside(b->addr, b->length, b->mr_iova, b->mr_length))
		return -ERANGE;
	return 0;
}

#endif /* SHCA_MEM_LOGIC_H */
