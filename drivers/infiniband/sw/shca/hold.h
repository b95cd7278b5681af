/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: the reorder holds (hold.c). */
#ifndef SHCA_HOLD_H
#define SHCA_HOLD_H

#include "shca.h"
#include "hold_logic.h"

/*
 * A packet after a gap from a peer on this host may wait for the packet
 * that fills it, overtaken on the way (rc_resp.c, "Reordering"): for
 * SHCA_REORDER_MIN_NS, then while a receive backlog or the QP's queue
 * holds packets, or its peer's packets are counted on their way,
 * SHCA_REORDER_HOLD_NS at most since ePSN or una last moved (a
 * ksoftirqd behind busy engines has no bound on its delay; the longest
 * hold stays below perftest's retransmit timeout, 14: 67 ms); past its
 * minimum the hold is looked at again every SHCA_REORDER_CHECK_NS.
 */
#define SHCA_REORDER_MIN_NS	(4 * NSEC_PER_MSEC)
#define SHCA_REORDER_HOLD_NS	(50 * NSEC_PER_MSEC)
#define SHCA_REORDER_CHECK_NS	(500 * NSEC_PER_USEC)

bool shca_direct_dest_holds(struct shca_qp *qp);
bool shca_reorder_hold(struct shca_qp *qp, struct shca_hold_time *ht,
		       u32 held, bool running, bool nak_sent);
bool shca_reorder_hold_keep(struct shca_qp *qp,
			    const struct shca_hold_time *ht,
			    struct sk_buff_head *queue);

#endif /* SHCA_HOLD_H */
