// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vm_hostile: a process scribbles on the rings it shares with the kernel,
 * on a live device.  Runs in the VM (see scripts/e2e/hostile.sh):
 *
 *   vm_hostile DEV GID_INDEX srq              spoiled SRQ WQEs, broken SRQ
 *   vm_hostile DEV GID_INDEX rings            spoiled SQ and RQ WQEs, broken
 *                                             SQ, RQ and CQ indices
 *   vm_hostile DEV GID_INDEX rc-sge           an RC receive WQE with num_sge
 *                                             0xffffffff in an RQ, an SRQ
 *                                             and a TM SRQ
 *   vm_hostile DEV GID_INDEX fuzz SEED ROUNDS random SQ and RQ entries and
 *                                             indices on UD and RC QPs;
 *                                             prints each completion status
 *                                             reached, with its count and
 *                                             the round of its first
 *
 * A spoiled WQE must complete with the status the verbs contract gives it
 * and its own wr_id; a broken index must raise its asynchronous event; and
 * after all of it the device must still move data, byte for byte.  The VM
 * harness fails the run on any oops, WARN, KASAN or lockdep report.
 */
#include <endian.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/tm_types.h>

#include "shca.h"		/* the provider's rings, to scribble on */
#include "vm_lib.h"

#define NO_QPN		0xfffff0u	/* no QP: such datagrams are dropped */
#define BROKEN		100000u		/* added to an index: no ring has it */
#define WR_BAD		0xbadu
#define FUZZ_BUF	65536u
#define KERNEL_SGE	12	/* SHCA_MAX_SGE: what the kernel's WQE copy holds */

/* Slot @idx of @wq's ring. */
static void *wq_slot(struct shca_wq *wq, uint32_t idx)
{
	struct shca_ring *r = &wq->ring;

	return r->entries + ((size_t)(idx & r->mask) << r->entry_shift);
}

/* The entry the provider wrote last into @wq. */
static void *wq_last(struct shca_wq *wq)
{
	return wq_slot(wq, wq->prod - 1);
}

/* Publish @wq's producer index as the provider does: entries first. */
static void wq_publish(struct shca_wq *wq, uint32_t prod)
{
	__atomic_store_n(&wq->ring.ctl->prod, prod, __ATOMIC_RELEASE);
}

/* Ring @qp's SQ doorbell without writing a WQE. */
static void sq_doorbell(struct ibv_qp *qp)
{
	struct ibv_send_wr *bad;

	ibv_cmd_post_send(qp, NULL, &bad);
}

/* Post one receive of MSG + 40 bytes to @srq, or else to @qp's RQ. */
static int post_one_recv(struct env *e, struct ibv_qp *qp,
			 struct ibv_srq *srq, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + NBUF * MSG,
			       .length = MSG + 40, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (srq)
		return ibv_post_srq_recv(srq, &wr, &bad);
	return ibv_post_recv(qp, &wr, &bad);
}

static bool qp_in_error(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return !ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) &&
	       a.qp_state == IBV_QPS_ERR;
}

/*
 * The device still moves data: one datagram from e->tx to a fresh QP,
 * checked for status, length (GRH included) and every byte.
 */
static bool sane_traffic(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(e, e->scq, cq, NULL) : NULL;
	uint8_t *rx = e->buf + NBUF * MSG;
	struct ibv_wc wc = {};
	bool ok = false;
	int i;

	memset(rx, 0, MSG + 40);
	if (qp && !post_one_recv(e, qp, NULL, 0x5a) &&
	    !send_n(e, e->ah, qp->qp_num, 1) &&
	    one_wc(cq, &wc) == IBV_WC_SUCCESS) {
		ok = wc.wr_id == 0x5a && wc.byte_len == MSG + 40;
		for (i = 0; i < MSG; i++)
			ok = ok && rx[40 + i] == 0xa0;
	}
	if (qp)
		CHECK(ibv_destroy_qp(qp) == 0);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	return ok;
}

/* ---- spoiled receive WQEs ------------------------------------------------ */

static void spoil_rlkey(struct shca_recv_wqe *w)
{
	((struct shca_sge *)(w + 1))->lkey ^= 0x00ffff00u;
}

static void spoil_rnum_sge(struct shca_recv_wqe *w)
{
	w->num_sge = 200;
}

/*
 * One receive WQE, spoiled by @spoil after posting, meets a SEND on a
 * fresh UD QP that receives from @srq, or from its own RQ: it must
 * complete with status @want and its own wr_id.
 */
static void bad_rwqe(struct env *e, struct ibv_srq *srq, struct ibv_cq *cq,
		     void (*spoil)(struct shca_recv_wqe *),
		     enum ibv_wc_status want, const char *what)
{
	struct ibv_qp *qp = ud_qp(e, e->scq, cq, srq);
	struct ibv_wc wc = {};
	int st = -1;

	CHECK(qp && post_one_recv(e, qp, srq, 0x5151) == 0);
	if (qp) {
		spoil(wq_last(srq ? &to_shca_srq(srq)->wq :
				    &to_shca_qp(qp)->rq));
		CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		st = one_wc(cq, &wc);
		CHECK(st == (int)want && wc.wr_id == 0x5151);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	printf("%s - %s WQE with %s completes with %s\n",
	       st == (int)want && wc.wr_id == 0x5151 ? "ok" : "not ok",
	       srq ? "SRQ" : "RQ", what, ibv_wc_status_str(want));
}

static void test_srq_hostile(struct env *e)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(e->pd, &sa);
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp;
	bool ev = false;

	CHECK(srq && cq);
	if (!srq || !cq)
		return;
	bad_rwqe(e, srq, cq, spoil_rlkey, IBV_WC_LOC_PROT_ERR, "a bad lkey");
	bad_rwqe(e, srq, cq, spoil_rnum_sge, IBV_WC_LOC_QP_OP_ERR,
		 "num_sge 200");

	/* a producer index no ring can have: SRQ_ERR, nothing consumed */
	qp = ud_qp(e, e->scq, cq, srq);
	CHECK(qp != NULL);
	if (qp) {
		to_shca_srq(srq)->wq.ring.ctl->prod += BROKEN;
		CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		ev = async_event_within(e, IBV_EVENT_SRQ_ERR);
		CHECK(ev);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	CHECK(ibv_destroy_srq(srq) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - SRQ with a hostile producer index raises SRQ_ERR\n",
	       ev ? "ok" : "not ok");
	CHECK(sane_traffic(e));
}

/*
 * A resize (ibv_modify_srq(IBV_SRQ_MAX_WR)) of an SRQ whose producer index
 * no ring can have is refused with EINVAL and changes nothing; once the
 * index is sane again the resize keeps both posted receives, which then
 * complete in order.
 */
static void test_srq_resize_hostile(struct env *e)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(e->pd, &sa);
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_srq_attr ra = { .max_wr = 64 };
	struct ibv_qp *qp = NULL;
	struct ibv_wc wc[2] = {};
	int bad = -1, good = -1;
	bool ok;

	CHECK(srq && cq);
	if (srq && cq)
		qp = ud_qp(e, e->scq, cq, srq);
	if (qp && !post_one_recv(e, qp, srq, 1) &&
	    !post_one_recv(e, qp, srq, 2)) {
		to_shca_srq(srq)->wq.ring.ctl->prod += BROKEN;
		bad = ibv_modify_srq(srq, &ra, IBV_SRQ_MAX_WR);
		to_shca_srq(srq)->wq.ring.ctl->prod -= BROKEN;
		good = ibv_modify_srq(srq, &ra, IBV_SRQ_MAX_WR);
	}
	ok = bad == EINVAL && good == 0 && qp &&
	     !send_n(e, e->ah, qp->qp_num, 2) &&
	     one_wc(cq, &wc[0]) == IBV_WC_SUCCESS &&
	     one_wc(cq, &wc[1]) == IBV_WC_SUCCESS &&
	     wc[0].wr_id == 1 && wc[1].wr_id == 2;
	CHECK(ok);
	if (qp)
		CHECK(ibv_destroy_qp(qp) == 0);
	if (srq)
		CHECK(ibv_destroy_srq(srq) == 0);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - SRQ resize with a hostile producer index: EINVAL (%d), "
	       "then a sane resize keeps both receives (%d)\n",
	       ok ? "ok" : "not ok", bad, good);
	CHECK(sane_traffic(e));
}

/* ---- spoiled send WQEs --------------------------------------------------- */

static void spoil_opcode(struct shca_send_wqe *w)
{
	w->opcode = 0x7f;
}

static void spoil_snum_sge(struct shca_send_wqe *w)
{
	w->num_sge = 200;
}

static void spoil_slkey(struct shca_send_wqe *w)
{
	((struct shca_sge *)(w + 1))->lkey ^= 0x00ffff00u;
}

static void spoil_inline(struct shca_send_wqe *w)
{
	w->flags |= SHCA_WQE_F_INLINE;
	w->inline_len = 0xffff;
}

static void spoil_ah(struct shca_send_wqe *w)
{
	w->ud.ah_handle ^= 0x5a5a5a;
}

/*
 * A copy of a good UD send WQE, spoiled by @spoil, goes in ahead of a good
 * one: it must complete with @want and its own wr_id, and the QP, now in
 * the error state, flush the good one.
 */
static void bad_swqe(struct env *e, void (*spoil)(struct shca_send_wqe *),
		     enum ibv_wc_status want, const char *what)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(e, cq, cq, NULL) : NULL;
	struct ibv_wc wc[2] = {};
	int st[2] = { -1, -1 };
	bool ok;

	CHECK(qp && !post_ud_send(e, qp, e->ah, NO_QPN, 1) &&
	      one_wc(cq, &wc[0]) == IBV_WC_SUCCESS);
	if (qp) {
		struct shca_wq *sq = &to_shca_qp(qp)->sq;
		struct shca_send_wqe *w = wq_slot(sq, sq->prod);

		memcpy(w, wq_last(sq), (size_t)1 << sq->ring.entry_shift);
		w->wr_id = WR_BAD;
		spoil(w);
		sq->prod++;	/* published by the next post */
		CHECK(post_ud_send(e, qp, e->ah, NO_QPN, 2) == 0);
		st[0] = one_wc(cq, &wc[0]);
		st[1] = one_wc(cq, &wc[1]);
		CHECK(qp_in_error(qp));
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	ok = st[0] == (int)want && wc[0].wr_id == WR_BAD &&
	     st[1] == IBV_WC_WR_FLUSH_ERR && wc[1].wr_id == 2;
	CHECK(ok);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - SQ WQE with %s completes with %s, the next is flushed\n",
	       ok ? "ok" : "not ok", what, ibv_wc_status_str(want));
}

/* ---- broken indices ------------------------------------------------------ */

/*
 * A UD QP's own SQ (rung through its doorbell) or RQ (met by a datagram)
 * gets a producer index no ring can have: IB_EVENT_QP_FATAL, and the QP
 * is in the error state.
 */
static void broken_ud(struct env *e, bool sq)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(e, cq, cq, NULL) : NULL;
	bool ev = false, err = false;

	CHECK(qp != NULL);
	if (qp) {
		struct shca_qp *sqp = to_shca_qp(qp);

		if (sq) {
			sqp->sq.ring.ctl->prod += BROKEN;
			sq_doorbell(qp);
		} else {
			sqp->rq.ring.ctl->prod += BROKEN;
			CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		}
		ev = async_event_within(e, IBV_EVENT_QP_FATAL);
		err = qp_in_error(qp);
		CHECK(ev && err);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - UD QP with a hostile %s producer index: QP_FATAL, "
	       "error state\n", ev && err ? "ok" : "not ok", sq ? "SQ" : "RQ");
}

/* A CQ whose consumer index is impossible: IB_EVENT_CQ_ERR. */
static void broken_cq(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(e, e->scq, cq, NULL) : NULL;
	bool ev = false;

	CHECK(qp && post_one_recv(e, qp, NULL, 1) == 0);
	if (qp) {
		to_shca_cq(cq)->ring.ctl->cons += BROKEN;
		CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		ev = async_event_within(e, IBV_EVENT_CQ_ERR);
		CHECK(ev);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - CQ with a hostile consumer index raises CQ_ERR\n",
	       ev ? "ok" : "not ok");
}

/* ---- RC pairs ------------------------------------------------------------ */

static struct ibv_qp *rc_qp(struct env *e, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	return ibv_create_qp(e->pd, &ia);
}

/* Bring @qp to RTS, connected to QP @dqpn on our own GID. */
static int rc_connect(struct env *e, struct ibv_qp *qp, uint32_t dqpn)
{
	if (rc_to_rtr(qp, dqpn, 4, &e->gid, e->gid_index, 64, 1))
		return -1;
	return qp_rts(qp, 0, 14, 7, 1, 4);
}

/* Two RC QPs on @cq connected to each other; 0 or -1. */
static int rc_pair(struct env *e, struct ibv_cq *cq, struct ibv_qp *qp[2])
{
	qp[0] = rc_qp(e, cq);
	qp[1] = rc_qp(e, cq);
	if (!qp[0] || !qp[1])
		return -1;
	if (rc_connect(e, qp[0], qp[1]->qp_num) ||
	    rc_connect(e, qp[1], qp[0]->qp_num))
		return -1;
	return 0;
}

/* Post one signaled SEND of MSG bytes from send slot 0 on RC @qp. */
static int post_rc_send(struct env *e, struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = MSG,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void rc_unpair(struct ibv_qp *qp[2])
{
	int i;

	for (i = 0; i < 2; i++)
		if (qp[i])
			CHECK(ibv_destroy_qp(qp[i]) == 0);
}

/*
 * The responder's RQ gets an impossible producer index: the SEND is NAKed
 * (remote operational error at the requester), the responder gets
 * IB_EVENT_QP_FATAL.
 */
static void broken_rc_rq(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp[2] = { NULL, NULL };
	struct ibv_wc wc = {};
	bool ok = false;

	if (cq && !rc_pair(e, cq, qp)) {
		to_shca_qp(qp[1])->rq.ring.ctl->prod += BROKEN;
		CHECK(post_rc_send(e, qp[0], 7) == 0);
		ok = one_wc(cq, &wc) == IBV_WC_REM_OP_ERR && wc.wr_id == 7 &&
		     wc.qp_num == qp[0]->qp_num;
		ok = async_event_within(e, IBV_EVENT_QP_FATAL) && ok;
		ok = qp_in_error(qp[1]) && ok;
	}
	CHECK(ok);
	rc_unpair(qp);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - RC responder with a hostile RQ producer index: NAK, "
	       "QP_FATAL\n", ok ? "ok" : "not ok");
}

static void test_rings(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);

	CHECK(cq != NULL);
	if (cq) {
		bad_rwqe(e, NULL, cq, spoil_rlkey, IBV_WC_LOC_PROT_ERR,
			 "a bad lkey");
		bad_rwqe(e, NULL, cq, spoil_rnum_sge, IBV_WC_LOC_QP_OP_ERR,
			 "num_sge 200");
		CHECK(ibv_destroy_cq(cq) == 0);
	}
	bad_swqe(e, spoil_opcode, IBV_WC_LOC_QP_OP_ERR, "opcode 0x7f");
	bad_swqe(e, spoil_snum_sge, IBV_WC_LOC_LEN_ERR, "num_sge 200");
	bad_swqe(e, spoil_slkey, IBV_WC_LOC_PROT_ERR, "a bad lkey");
	bad_swqe(e, spoil_inline, IBV_WC_LOC_LEN_ERR, "inline_len 65535");
	bad_swqe(e, spoil_ah, IBV_WC_LOC_QP_OP_ERR, "an unknown AH");
	broken_ud(e, true);
	broken_ud(e, false);
	broken_rc_rq(e);
	broken_cq(e);
	CHECK(sane_traffic(e));
}

/* ---- receive WQEs with an impossible SGE count on RC: every ring ---------- */

enum rx_ring { RX_RQ, RX_SRQ, RX_TM_SRQ };

static const char *const rx_ring_name[] = { "RQ", "SRQ", "TM SRQ" };

/*
 * The WQE the provider wrote last into @wq gets num_sge 0xffffffff and
 * KERNEL_SGE zero-length SGEs (as many as its slot holds), straight in the
 * mapped ring: a kernel that keeps the count walks the zero-length SGEs
 * off the end of its copy of the WQE, into whatever the heap has there.
 */
static void spoil_rwqe_huge(struct env *e, struct shca_wq *wq)
{
	struct shca_recv_wqe *w = wq_last(wq);
	struct shca_sge *sge = (struct shca_sge *)(w + 1);
	size_t room = ((size_t)1 << wq->ring.entry_shift) - sizeof(*w);
	unsigned int i, n = room / sizeof(*sge);

	if (n > KERNEL_SGE)
		n = KERNEL_SGE;
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)e->buf + NBUF * MSG;
		sge[i].length = 0;
		sge[i].lkey = e->mr->lkey;
	}
	w->num_sge = 0xffffffffu;
}

/* An RC QP on @cq that receives from @srq, or from an RQ of its own. */
static struct ibv_qp *rc_qp_srq(struct env *e, struct ibv_cq *cq,
				struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2 },
	};

	return ibv_create_qp(e->pd, &ia);
}

/* The SRQ of @ring, its completions on @cq (a TM SRQ's), or NULL for RQ. */
static struct ibv_srq *rx_srq(struct env *e, struct ibv_cq *cq,
			      enum rx_ring ring)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = e->pd,
	};

	if (ring == RX_RQ)
		return NULL;
	if (ring == RX_TM_SRQ) {
		sa.comp_mask |= IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
		sa.srq_type = IBV_SRQT_TM;
		sa.cq = cq;
		sa.tm_cap.max_num_tags = 4;
		sa.tm_cap.max_ops = 4;
	}
	return ibv_create_srq_ex(e->ctx, &sa);
}

/*
 * One receive WQE with num_sge 0xffffffff and twelve zero-length SGEs in
 * @ring of an RC responder meets a SEND of MSG bytes (@tagged: an eager
 * TM message whose tag matches nothing, so it takes the WQE as an
 * unexpected message; else a plain SEND).  The verbs contract for a
 * malformed receive WQE: it completes with IBV_WC_LOC_QP_OP_ERR and its
 * own wr_id, the responder's QP goes to the error state (an SRQ has no
 * state of its own: the QP that took the WQE does), and the requester's
 * SEND is NAKed (IBV_WC_REM_OP_ERR).  The VM harness fails the run on
 * the KASAN report of a kernel that walks the count.
 */
static void bad_rc_rwqe(struct env *e, enum rx_ring ring, bool tagged)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq = cq ? rx_srq(e, cq, ring) : NULL;
	struct ibv_qp *qp[2] = { NULL, NULL };
	int rx = -1, tx = -1, i, st;
	uint64_t rx_id = 0;
	struct ibv_wc wc;
	bool ok = false;

	CHECK(cq && (ring == RX_RQ || srq));
	if (!cq || (ring != RX_RQ && !srq))
		goto out;
	qp[0] = rc_qp_srq(e, cq, NULL);
	qp[1] = rc_qp_srq(e, cq, srq);
	CHECK(qp[0] && qp[1]);
	if (!qp[0] || !qp[1] || rc_connect(e, qp[0], qp[1]->qp_num) ||
	    rc_connect(e, qp[1], qp[0]->qp_num))
		goto out;
	CHECK(post_one_recv(e, qp[1], srq, 0x5151) == 0);
	spoil_rwqe_huge(e, srq ? &to_shca_srq(srq)->wq : &to_shca_qp(qp[1])->rq);
	if (tagged) {
		struct ibv_tmh t = { .opcode = IBV_TMH_EAGER,
				     .app_ctx = htobe32(1),
				     .tag = htobe64(0x7a9) };

		memcpy(e->buf, &t, sizeof(t));
	}
	CHECK(post_rc_send(e, qp[0], 7) == 0);
	for (i = 0; i < 2; i++) {
		memset(&wc, 0, sizeof(wc));
		st = one_wc(cq, &wc);
		if (st < 0)
			break;
		if (wc.qp_num == qp[1]->qp_num) {
			rx = st;
			rx_id = wc.wr_id;
		} else if (wc.qp_num == qp[0]->qp_num && wc.wr_id == 7) {
			tx = st;
		}
	}
	ok = rx == IBV_WC_LOC_QP_OP_ERR && rx_id == 0x5151 &&
	     tx == IBV_WC_REM_OP_ERR && qp_in_error(qp[1]);
	if (!ok)
		printf("# %s: receive %s (wr_id %#llx), SEND %s, responder %s\n",
		       rx_ring_name[ring],
		       rx < 0 ? "none" : ibv_wc_status_str(rx),
		       (unsigned long long)rx_id,
		       tx < 0 ? "none" : ibv_wc_status_str(tx),
		       qp_in_error(qp[1]) ? "in ERR" : "not in ERR");
out:
	memset(e->buf, 0xa0, MSG);	/* send slot 0 as setup() left it */
	CHECK(ok);
	rc_unpair(qp);
	if (srq)
		CHECK(ibv_destroy_srq(srq) == 0);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - RC %s WQE with num_sge 0xffffffff and 12 zero-length SGEs "
	       "%s: LOC_QP_OP_ERR, responder in ERR, SEND NAKed\n",
	       ok ? "ok" : "not ok", rx_ring_name[ring],
	       tagged ? "taken by an unexpected eager TM message" :
			"taken by a SEND");
}

static void test_rc_sge(struct env *e)
{
	bad_rc_rwqe(e, RX_RQ, false);
	bad_rc_rwqe(e, RX_SRQ, false);
	bad_rc_rwqe(e, RX_TM_SRQ, false);
	bad_rc_rwqe(e, RX_TM_SRQ, true);
	CHECK(sane_traffic(e));
}

/* ---- fuzz ---------------------------------------------------------------- */

struct fuzz {
	struct env *e;
	uint64_t rng;
	uint8_t *buf;		/* FUZZ_BUF bytes, registered as mr */
	struct ibv_mr *mr;	/* local and remote access */
	uint32_t ah_handle;
	unsigned long wcs, errs;
	int round;
	/* coverage: completions per status, and the round of the first */
	unsigned long st[IBV_WC_GENERAL_ERR + 1];
	int st_first[IBV_WC_GENERAL_ERR + 1];
};

static uint32_t rnd(struct fuzz *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return (uint32_t)(f->rng >> 16);
}

/* Mostly @good, sometimes one bit off, sometimes anything. */
static uint32_t fuzz_key(struct fuzz *f, uint32_t good)
{
	switch (rnd(f) % 4) {
	case 0:
		return rnd(f);
	case 1:
		return good ^ (1u << (rnd(f) % 32));
	default:
		return good;
	}
}

/* Mostly inside the fuzz buffer, sometimes across its end or anywhere. */
static uint64_t fuzz_addr(struct fuzz *f)
{
	uintptr_t base = (uintptr_t)f->buf;

	switch (rnd(f) % 4) {
	case 0:
		return ((uint64_t)rnd(f) << 32) | rnd(f);
	case 1:
		return base + FUZZ_BUF - rnd(f) % 64;
	default:
		return base + rnd(f) % FUZZ_BUF;
	}
}

static uint32_t fuzz_len(struct fuzz *f)
{
	switch (rnd(f) % 4) {
	case 0:
		return rnd(f);
	case 1:
		return 0;
	default:
		return rnd(f) % 4096;
	}
}

static const uint8_t rc_ops[] = {
	SHCA_OP_SEND, SHCA_OP_SEND_WITH_IMM, SHCA_OP_RDMA_WRITE,
	SHCA_OP_RDMA_WRITE_WITH_IMM, SHCA_OP_RDMA_READ,
	SHCA_OP_ATOMIC_CMP_AND_SWP, SHCA_OP_ATOMIC_FETCH_AND_ADD,
};

/*
 * A send WQE that should succeed: SEND to @dqpn through our AH on UD,
 * otherwise any RC operation on the fuzz buffer with its keys.
 * Local buffers come from the first half, remote ranges from the second.
 */
static void plausible_swqe(struct fuzz *f, struct shca_send_wqe *w, bool ud,
			   uint32_t dqpn)
{
	struct shca_sge *sge = (struct shca_sge *)(w + 1);
	uintptr_t base = (uintptr_t)f->buf;

	memset(w, 0, sizeof(*w) + sizeof(*sge));
	w->wr_id = rnd(f);
	w->flags = SHCA_WQE_F_SIGNALED;
	w->num_sge = 1;
	sge->addr = base + rnd(f) % (FUZZ_BUF / 2 - 1024);
	sge->length = rnd(f) % 1000;
	sge->lkey = f->mr->lkey;
	if (ud) {
		w->opcode = rnd(f) % 2 ? SHCA_OP_SEND : SHCA_OP_SEND_WITH_IMM;
		w->ud.ah_handle = f->ah_handle;
		w->ud.remote_qpn = dqpn;
		w->ud.remote_qkey = QKEY;
		return;
	}
	w->opcode = rc_ops[rnd(f) % sizeof(rc_ops)];
	if (w->opcode == SHCA_OP_ATOMIC_CMP_AND_SWP ||
	    w->opcode == SHCA_OP_ATOMIC_FETCH_AND_ADD) {
		sge->addr &= ~(uint64_t)7;
		sge->length = 8;
		w->atomic.remote_addr = base + FUZZ_BUF / 2 +
					rnd(f) % (FUZZ_BUF / 16) * 8;
		w->atomic.compare_add = rnd(f);
		w->atomic.swap = rnd(f);
		w->atomic.rkey = f->mr->rkey;
	} else {
		w->rdma.remote_addr = base + FUZZ_BUF / 2 +
				      rnd(f) % (FUZZ_BUF / 2 - 1024);
		w->rdma.rkey = f->mr->rkey;
	}
}

/* Spoil the key (@what 0), address (1) or length (2) of @sge. */
static void mutate_sge(struct fuzz *f, struct shca_sge *sge,
		       unsigned int what)
{
	if (what == 0)
		sge->lkey = fuzz_key(f, f->mr->lkey);
	else if (what == 1)
		sge->addr = fuzz_addr(f);
	else
		sge->length = fuzz_len(f);
}

/* Spoil one field of send WQE @w (of @stride bytes) at random. */
static void mutate_swqe(struct fuzz *f, struct shca_send_wqe *w,
			size_t stride)
{
	struct shca_sge *sge = (struct shca_sge *)(w + 1);
	unsigned int what = rnd(f) % 10;

	switch (what) {
	case 0:
		w->opcode = rnd(f) % 2 ? rnd(f) % 16 : (uint8_t)rnd(f);
		break;
	case 1:
		w->num_sge = (uint8_t)rnd(f);
		break;
	case 2:
		w->flags = (uint8_t)rnd(f);
		break;
	case 3:
		w->flags |= SHCA_WQE_F_INLINE;
		w->inline_len = rnd(f) % 2 ? rnd(f) % 256 : rnd(f);
		break;
	case 4:
	case 5:
	case 6:
		mutate_sge(f, sge, what - 4);
		break;
	case 7:	/* the R_Key, or the AH handle and QPN on UD */
		w->atomic.rkey = fuzz_key(f, f->mr->rkey);
		w->rdma.rkey = fuzz_key(f, f->mr->rkey);
		break;
	case 8:	/* the remote address, or the AH handle on UD */
		w->rdma.remote_addr = fuzz_addr(f);
		break;
	default:
		((uint8_t *)w)[rnd(f) % stride] = (uint8_t)rnd(f);
		break;
	}
}

/*
 * Write one send WQE at @sq's producer index: a plausible one, left
 * alone a third of the time, otherwise spoiled once or twice.
 */
static void fuzz_swqe(struct fuzz *f, struct shca_wq *sq, bool ud,
		      uint32_t dqpn)
{
	size_t stride = (size_t)1 << sq->ring.entry_shift;
	struct shca_send_wqe *w = wq_slot(sq, sq->prod);
	uint32_t n = rnd(f) % 3;

	plausible_swqe(f, w, ud, dqpn);
	while (n--)
		mutate_swqe(f, w, stride);
	sq->prod++;
}

/* The same for a receive WQE: 1100 bytes of the fuzz buffer's first half. */
static void fuzz_rwqe(struct fuzz *f, struct shca_wq *rq)
{
	size_t stride = (size_t)1 << rq->ring.entry_shift;
	struct shca_recv_wqe *w = wq_slot(rq, rq->prod);
	struct shca_sge *sge = (struct shca_sge *)(w + 1);
	unsigned int what;

	w->wr_id = rnd(f);
	w->num_sge = 1;
	w->reserved_96 = 0;
	sge->addr = (uintptr_t)f->buf + rnd(f) % (FUZZ_BUF / 2 - 1100);
	sge->length = 1100;
	sge->lkey = f->mr->lkey;
	what = rnd(f) % 9;
	switch (what) {
	case 0:
		w->num_sge = rnd(f) % 2 ? rnd(f) % 4 : rnd(f);
		break;
	case 1:
	case 2:
	case 3:
		mutate_sge(f, sge, what - 1);
		break;
	case 4:
		((uint8_t *)w)[rnd(f) % stride] = (uint8_t)rnd(f);
		break;
	default:
		break;
	}
	rq->prod++;
}

/* Publish @wq's entries, or now and then an impossible index. */
static void fuzz_publish(struct fuzz *f, struct shca_wq *wq)
{
	wq_publish(wq, rnd(f) % 16 ? wq->prod : wq->prod + rnd(f));
}

/*
 * Fill up to a few entries of @qp's RQ and SQ (the latter aimed at
 * @dqpn) with hostile content and ring the doorbell.
 */
static void fuzz_qp(struct fuzz *f, struct ibv_qp *qp, uint32_t dqpn)
{
	struct shca_qp *sqp = to_shca_qp(qp);
	uint32_t n, i;

	n = rnd(f) % 6;
	for (i = 0; i < n; i++)
		fuzz_rwqe(f, &sqp->rq);
	fuzz_publish(f, &sqp->rq);
	n = 1 + rnd(f) % 6;
	for (i = 0; i < n; i++)
		fuzz_swqe(f, &sqp->sq, qp->qp_type == IBV_QPT_UD, dqpn);
	fuzz_publish(f, &sqp->sq);
	sq_doorbell(qp);
}

/*
 * Take what completions come until none has come for a while; each must
 * carry a status and opcode the verbs define.
 */
static void fuzz_drain(struct fuzz *f, struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int idle = 0;

	while (idle < 100) {
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r <= 0) {
			idle++;
			usleep(2000);
			continue;
		}
		idle = 0;
		f->wcs++;
		if (wc.status != IBV_WC_SUCCESS)
			f->errs++;
		CHECK(wc.status <= IBV_WC_GENERAL_ERR);
		if (wc.status <= IBV_WC_GENERAL_ERR &&
		    !f->st[wc.status]++)
			f->st_first[wc.status] = f->round;
		CHECK(wc.status != IBV_WC_SUCCESS ||
		      wc.opcode <= IBV_WC_DRIVER3);
	}
}

static void fuzz_ud_round(struct fuzz *f)
{
	struct env *e = f->e;
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 128, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? ud_qp(e, cq, cq, NULL) : NULL;

	CHECK(qp != NULL);
	if (qp) {
		fuzz_qp(f, qp, qp->qp_num);
		/* datagrams for the hostile receive WQEs */
		CHECK(send_n(e, e->ah, qp->qp_num, 2) == 0);
		fuzz_drain(f, cq);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
}

/* Both ends of an RC pair post hostile requests at each other. */
static void fuzz_rc_round(struct fuzz *f)
{
	struct env *e = f->e;
	struct ibv_cq *cq = ibv_create_cq(e->ctx, 128, NULL, NULL, 0);
	struct ibv_qp *qp[2] = { NULL, NULL };

	CHECK(cq && rc_pair(e, cq, qp) == 0);
	if (qp[0] && qp[1]) {
		fuzz_qp(f, qp[0], 0);
		fuzz_qp(f, qp[1], 0);
		fuzz_drain(f, cq);
	}
	rc_unpair(qp);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0);
}

static void test_fuzz(struct env *e, uint64_t seed, int rounds)
{
	struct fuzz f = { .e = e, .rng = seed | 1 };
	int r, bad = 0;

	f.buf = calloc(1, FUZZ_BUF);
	f.mr = f.buf ? ibv_reg_mr(e->pd, f.buf, FUZZ_BUF,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	CHECK(f.mr != NULL);
	if (!f.mr)
		return;
	f.ah_handle = to_shca_ah(e->ah)->ah_handle;
	for (r = 0; r < rounds; r++) {
		f.round = r;
		if (r % 2)
			fuzz_rc_round(&f);
		else
			fuzz_ud_round(&f);
		if (r % 16 == 15 && !sane_traffic(e))
			bad++;
	}
	CHECK(sane_traffic(e));
	/* the plausible WQEs must have reached the success paths too */
	CHECK(f.wcs > f.errs);
	CHECK(ibv_dereg_mr(f.mr) == 0);
	free(f.buf);
	for (r = 0; r <= IBV_WC_GENERAL_ERR; r++)
		if (f.st[r])
			printf("fuzz coverage: %-28s %6lu completions, first in round %d\n",
			       ibv_wc_status_str(r), f.st[r], f.st_first[r]);
	printf("%s - fuzz seed %llu: %d rounds, %lu completions (%lu errors), "
	       "the device still delivers\n", bad || failures ? "not ok" : "ok",
	       (unsigned long long)seed, rounds, f.wcs, f.errs);
}

int main(int argc, char **argv)
{
	static struct env e;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEV GID_INDEX srq|rings|rc-sge|fuzz "
			"[SEED ROUNDS]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);	/* progress reaches the log */
	e.gid_index = atoi(argv[2]);
	if (setup(&e, argv[1])) {
		perror("setup");
		return 1;
	}
	if (!strcmp(argv[3], "srq")) {
		test_srq_hostile(&e);
		test_srq_resize_hostile(&e);
	}
	else if (!strcmp(argv[3], "rings"))
		test_rings(&e);
	else if (!strcmp(argv[3], "rc-sge"))
		test_rc_sge(&e);
	else if (!strcmp(argv[3], "fuzz") && argc == 6)
		test_fuzz(&e, strtoull(argv[4], NULL, 0), atoi(argv[5]));
	else
		return 2;
	return failures ? 1 : 0;
}
