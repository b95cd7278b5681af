/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: on-demand paging MRs (shca_odp.c).  Built only with
 * CONFIG_INFINIBAND_ON_DEMAND_PAGING; without it no ODP MR can exist (the
 * access flag is refused and nothing is advertised), so the stubs below
 * are never reached by a copy.
 */
#ifndef SHCA_ODP_H
#define SHCA_ODP_H

#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct page;
struct shca_mr;

/*
 * An ODP MR's range held for an atomic (shca_odp_hold()): an explicit
 * MR's umem_mutex is held, or an implicit MR's page is referenced.
 */
struct shca_odp_hold {
	struct shca_mr *mr;
	struct page *page;	/* implicit MRs: the page */
};

#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)

/* The access flag reg_user_mr accepts for an ODP MR. */
#define SHCA_ACCESS_ODP		IB_ACCESS_ON_DEMAND

void shca_odp_query_device(struct ib_device_attr *attr);
struct ib_umem *shca_odp_umem_get(struct ib_device *ibdev, u64 start,
				  u64 length, int access);
int shca_odp_charge(struct shca_mr *mr);
int shca_odp_hold(struct shca_mr *mr, u64 addr, u32 len,
		  struct shca_odp_hold *h);
void shca_odp_copy_held(const struct shca_odp_hold *h, u64 addr, void *buf,
			u32 len, bool to_mr);
void shca_odp_release(struct shca_odp_hold *h);
int shca_odp_copy(struct shca_mr *mr, u64 addr, void *buf, u32 len,
		  bool to_mr, bool may_fault);
int shca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);
#define SHCA_ADVISE_MR		shca_advise_mr

#else /* !CONFIG_INFINIBAND_ON_DEMAND_PAGING */

#define SHCA_ACCESS_ODP		0
#define SHCA_ADVISE_MR		NULL

static inline void shca_odp_query_device(struct ib_device_attr *attr)
{
}

static inline struct ib_umem *shca_odp_umem_get(struct ib_device *ibdev,
						u64 start, u64 length,
						int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline int shca_odp_charge(struct shca_mr *mr)
{
	return -EOPNOTSUPP;
}

static inline int shca_odp_hold(struct shca_mr *mr, u64 addr, u32 len,
				struct shca_odp_hold *h)
{
	return -EOPNOTSUPP;
}

static inline void shca_odp_copy_held(const struct shca_odp_hold *h,
				      u64 addr, void *buf, u32 len, bool to_mr)
{
}

static inline void shca_odp_release(struct shca_odp_hold *h)
{
}

static inline int shca_odp_copy(struct shca_mr *mr, u64 addr, void *buf,
				u32 len, bool to_mr, bool may_fault)
{
	return -EOPNOTSUPP;
}

#endif /* CONFIG_INFINIBAND_ON_DEMAND_PAGING */

#endif /* SHCA_ODP_H */
