/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: receive work queues (ib_wq), RSS indirection tables and RSS QPs
 * (rwq.c).  The hash and state rules are pure functions in rss_logic.h.
 */
#ifndef SHCA_RWQ_H
#define SHCA_RWQ_H

#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "shca.h"

#define SHCA_MAX_RWQ		4096
#define SHCA_MAX_RWQ_IND_TBL	4096

/*
 * IB_WQ_FLAGS_DELAY_DROP: a frame that finds no WQE waits at most
 * SHCA_RWQ_DELAY_MS on its WQ's pending queue (at most SHCA_RWQ_DELAY_MAX
 * frames) before it is dropped and counted (rwq_delay_dropped).  The
 * ring is looked at again every SHCA_RWQ_DELAY_POLL_MS while frames wait:
 * posting to a WQ rings no doorbell.
 */
#define SHCA_RWQ_DELAY_MS	1000
#define SHCA_RWQ_DELAY_MAX	256
#define SHCA_RWQ_DELAY_POLL_MS	1

/*
 * A receive work queue (IB_WQT_RQ, user only).  ib_core does not allocate
 * it: create_wq returns it and destroy_wq frees it.  Its ring is consumed
 * by the RSS QPs whose tables name it, one frame at a time under @lock.
 * ib_core's usecnt keeps it alive while a table uses it, and a table
 * while an RSS QP uses it, so the RX path needs no reference of its own.
 * @delay_work (DELAY_DROP) holds none either: destroy_wq cancels it
 * (cancel_delayed_work_sync) before it frees the WQ, and nothing can
 * queue it again by then (no table names the WQ any more).
 */
struct shca_rwq {
	struct ib_wq ibwq;
	struct mutex modify_lock;	/* modify_wq: one at a time */
	spinlock_t lock;		/* consumer side of @ring, @state */
	struct shca_ring ring;
	u32 max_sge;
	enum ib_wq_state state;		/* @lock; changed under modify_lock */
	u32 flags;			/* IB_WQ_FLAGS_*, as @state */
	struct sk_buff_head pending;	/* DELAY_DROP frames, under @lock */
	struct delayed_work delay_work;	/* delivers or expires @pending */
};

/* An indirection table of 1 << log_ind_tbl_size WQs (ib_core's array). */
struct shca_ind_tbl {
	struct ib_rwq_ind_table ibtbl;
	u32 size;
};

/* The hash configuration of an RSS QP. */
struct shca_rss {
	struct shca_ind_tbl *tbl;		/* ib_core holds it (usecnt) */
	u64 fields;				/* SHCA_RX_HASH_* */
	u8 key[SHCA_RX_HASH_KEY_LEN];
};

static inline struct shca_rwq *to_srwq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct shca_rwq, ibwq);
}

static inline struct shca_ind_tbl *to_sind_tbl(struct ib_rwq_ind_table *t)
{
	return container_of(t, struct shca_ind_tbl, ibtbl);
}

struct ib_wq *shca_create_wq(struct ib_pd *pd, struct ib_wq_init_attr *init,
			     struct ib_udata *udata);
int shca_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata);
int shca_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask,
		   struct ib_udata *udata);
int shca_create_rwq_ind_table(struct ib_rwq_ind_table *ibtbl,
			      struct ib_rwq_ind_table_init_attr *init,
			      struct ib_udata *udata);
int shca_destroy_rwq_ind_table(struct ib_rwq_ind_table *ibtbl);

bool shca_qp_is_rss(const struct shca_qp *qp);
int shca_rss_create_qp(struct shca_qp *qp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata);
void shca_rss_destroy_qp(struct shca_qp *qp);
void shca_rss_rx_one(struct shca_qp *qp, struct sk_buff *skb);

#endif /* SHCA_RWQ_H */
