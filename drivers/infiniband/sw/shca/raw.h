/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: RAW_PACKET QPs (raw.c) - whole Ethernet frames in and out.
 */
#ifndef SHCA_RAW_H
#define SHCA_RAW_H

#include "shca.h"
#include "rwqe.h"

/*
 * Copy the whole frame (skb->data .. skb->len, skb->data at the Ethernet
 * header, possibly non-linear) into a receive WQE's buffers, checking
 * every SGE against @pd (lkey, bounds, local write) the same way rx_engine.c
 * does; @w is as shca_rwqe_pop() checked it.  Returns IB_WC_SUCCESS (and
 * *byte_len = skb->len), IB_WC_LOC_LEN_ERR or IB_WC_LOC_PROT_ERR.
 * Context: process, may not sleep: an ODP MR's pages are used only if
 * present (shca_sge_cursor.nofault).
 */
enum ib_wc_status shca_frame_scatter(struct shca_dev *sdev, struct ib_pd *pd,
				     const struct shca_rwqe *w,
				     const struct sk_buff *skb, u32 *byte_len);

/*
 * One steered frame for a RAW_PACKET QP, from its rq_work.  Does not
 * consume @skb.  For an RSS QP it calls shca_rss_rx_one().
 */
void shca_raw_rx_one(struct shca_qp *qp, struct sk_buff *skb);

/* Is a steered frame welcome on @qp now?  Context: any. */
bool shca_raw_qp_ready(struct shca_qp *qp);

/* The SQ engine's handler of one RAW_PACKET send WQE (ud_send.c). */
enum ib_wc_status shca_raw_send(struct shca_qp *qp,
				const struct shca_send_wqe *hdr,
				const struct shca_sge *sge, const void *slot,
				u32 *len);

int shca_net_raw_check(const struct net *net);
int shca_raw_may_create(struct shca_dev *sdev, struct ib_udata *udata,
			const char *what);
int shca_raw_check_create(struct ib_device *ibdev,
			  const struct ib_qp_init_attr *init,
			  struct ib_udata *udata);

#endif /* SHCA_RAW_H */
