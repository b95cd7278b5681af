/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: pure rules of on-demand paging (shca_odp.c) - which entries of an
 * ODP umem's page list a copy needs and whether they are mapped, what an
 * ibv_advise_mr() advice asks for, and the ODP capabilities.  No device
 * state; kunit/shca_kunit_odp.c tests these exact functions.
 */
#ifndef SHCA_ODP_LOGIC_H
#define SHCA_ODP_LOGIC_H

#include <linux/errno.h>
#include <linux/overflow.h>
#include <linux/types.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

/*
 * Does a registration of [@start, @start + @length) ask for an implicit
 * ODP MR, one of the whole address space (ibv_reg_mr(pd, NULL, SIZE_MAX,
 * IBV_ACCESS_ON_DEMAND))?
 */
static inline bool shca_odp_implicit(u64 start, u64 length)
{
	return !start && length == U64_MAX;
}

/* The page list permission bits (ib_umem_odp.h) a copy needs. */
static inline u64 shca_odp_perm(bool write)
{
	return write ? ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT :
		       ODP_READ_ALLOWED_BIT;
}

/*
 * The user virtual address of MR byte @addr: the MR maps [@iova,
 * @iova + length) onto the user's [@start, @start + length).  The caller
 * has checked that @addr lies inside the MR.
 */
static inline u64 shca_odp_va(u64 iova, u64 start, u64 addr)
{
	return addr - iova + start;
}

/**
 * shca_odp_span - the page list entries holding [@va, @va + @len)
 * @umem_start: user address of the first entry's page (ib_umem_start())
 * @shift: log2 of the umem's page size
 * @npages: entries in the list
 * @va: first byte
 * @len: bytes, at least one
 * @first: index of the entry holding @va, on success
 * @count: entries from @first on that the range touches, on success
 *
 * Return: false for an empty range or one not inside the list.
 */
static inline bool shca_odp_span(u64 umem_start, unsigned int shift,
				 u64 npages, u64 va, u64 len, u64 *first,
				 u64 *count)
{
	u64 last;

	if (!len || shift > 63 || va < umem_start ||
	    check_add_overflow(va, len - 1, &last))
		return false;
	*first = (va - umem_start) >> shift;
	last = (last - umem_start) >> shift;
	if (last >= npages)
		return false;
	*count = last - *first + 1;
	return true;
}

/* Does each of @count entries of @list from @first allow @perm? */
static inline bool shca_odp_mapped(const dma_addr_t *list, u64 first,
				   u64 count, u64 perm)
{
	u64 i;

	for (i = first; i < first + count; i++)
		if ((list[i] & perm) != perm)
			return false;
	return true;
}

/**
 * shca_odp_advice - what an ibv_advise_mr() advice asks of a range
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_*
 * @perm: the permission bits to map with (shca_odp_perm())
 * @fault: true to fault absent pages in, false to map present ones only
 *
 * Return: 0, or -EOPNOTSUPP for an advice shca does not know.
 */
static inline int shca_odp_advice(u32 advice, u64 *perm, bool *fault)
{
	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
		*perm = shca_odp_perm(false);
		*fault = true;
		return 0;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		*perm = shca_odp_perm(true);
		*fault = true;
		return 0;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		*perm = shca_odp_perm(false);
		*fault = false;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * The ODP capabilities: explicit and implicit ODP MRs.  Every access to
 * MR memory goes through mem.c, which faults ODP pages in, so
 * each operation a transport has works on ODP MRs: RC and XRC all of
 * them; UC no READ or atomics; UD sends and receives.  SRQ receives
 * where the transport can use an SRQ (RC, UD, XRC; not UC, qp.c).
 */
static inline void shca_odp_fill_caps(struct ib_odp_caps *caps)
{
	u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

	caps->general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	caps->per_transport_caps.rc_odp_caps = rc;
	caps->per_transport_caps.xrc_odp_caps = rc;
	caps->per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND |
					       IB_ODP_SUPPORT_RECV |
					       IB_ODP_SUPPORT_WRITE;
	caps->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND |
					       IB_ODP_SUPPORT_RECV |
					       IB_ODP_SUPPORT_SRQ_RECV;
}

#endif /* SHCA_ODP_LOGIC_H */
