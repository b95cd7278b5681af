// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * WQ / indirection table / RSS QP checks that pyverbs cannot make:
 * max_wr/max_sge written back, destroy EBUSY while in use, ERR flush of a
 * post made in ERR with wr_ids, and IBV_WQ_FLAGS_CVLAN_STRIPPING: frames
 * a raw QP sends on the port, steered through a one-entry RSS table to
 * the WQ, arrive without their 802.1Q tag, whose TCI ibv_wc_read_cvlan()
 * gives (untagged frames and WQs without the flag: the frame whole, 0);
 * and IBV_WQ_FLAGS_DELAY_DROP through the same path: a frame that finds
 * no WQE waits (rwq_delayed) and lands whole once one is posted, several
 * in order; one never given a WQE expires (rwq_delay_dropped), as do
 * those waiting at a move to RESET or at destroy; a WQ without the flag
 * drops at once (rwq_no_wqe).
 * Prints "ok - X" / "not ok - X".
 *   wq_busy DEV
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "vm_lib.h"

static int fails;

#define T(cond, name)                                                          \
	do {                                                                   \
		if (cond)                                                      \
			printf("ok - %s\n", name);                             \
		else {                                                         \
			printf("not ok - %s (errno %d)\n", name, errno);       \
			fails++;                                               \
		}                                                              \
	} while (0)

static const uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e,
	0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b,
	0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2,
	0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa };

/* ---- C-VLAN stripping ------------------------------------------------ */

#define CV_SLOT		256
#define CV_PAYLOAD	60
#define CV_TCI		0xa07b		/* PCP 5, VID 123 */

static const uint8_t cv_dmac[6] = { 0x02, 0xca, 0x5e, 0x00, 0x00, 0x0b };
static const uint8_t cv_smac[6] = { 0x02, 0xca, 0x5e, 0x00, 0x00, 0x0c };

/* Everything one C-VLAN case needs; the sender is shared. */
struct cv {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;		/* the WQs' CQ, with the CVLAN field */
	struct ibv_cq *scq;
	struct ibv_qp *sqp;		/* RAW_PACKET sender, in RTS */
	struct ibv_mr *smr, *rmr;
	uint8_t sbuf[CV_SLOT];
	uint8_t rbuf[4 * CV_SLOT];
	struct ibv_rwq_ind_table *tbl;	/* the one-entry table of the target */
	struct ibv_qp *qp;		/* its RSS QP */
	struct ibv_flow *flow;		/* cv_dmac -> qp */
	uint32_t posted;
};

struct cv_wc {
	uint64_t wr_id;
	int status;
	uint32_t byte_len, qp_num;
	uint16_t cvlan;
};

/* An Ethernet frame to cv_dmac, tagged with @tci or not. */
static size_t cv_frame(uint8_t *f, int tagged, uint8_t seed)
{
	size_t n = 12;
	int i;

	memcpy(f, cv_dmac, 6);
	memcpy(f + 6, cv_smac, 6);
	if (tagged) {
		f[n++] = 0x81;
		f[n++] = 0x00;
		f[n++] = CV_TCI >> 8;
		f[n++] = CV_TCI & 0xff;
	}
	f[n++] = 0x88;			/* local experimental EtherType */
	f[n++] = 0xb5;
	for (i = 0; i < CV_PAYLOAD; i++)
		f[n++] = (uint8_t)(seed + i);
	return n;
}

static int cv_setup(struct cv *c)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	c->cqx = ibv_create_cq_ex(c->ctx, &ca);
	c->scq = ibv_create_cq(c->ctx, 16, NULL, NULL, 0);
	if (!c->cqx || !c->scq)
		return -1;
	qa.send_cq = c->scq;
	qa.recv_cq = c->scq;
	c->sqp = ibv_create_qp(c->pd, &qa);
	c->smr = ibv_reg_mr(c->pd, c->sbuf, sizeof(c->sbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	c->rmr = ibv_reg_mr(c->pd, c->rbuf, sizeof(c->rbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	if (!c->sqp || !c->smr || !c->rmr ||
	    ibv_modify_qp(c->sqp, &at, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	at.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(c->sqp, &at, IBV_QP_STATE))
		return -1;
	at.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(c->sqp, &at, IBV_QP_STATE) ? -1 : 0;
}

/* Steer cv_dmac to @wq: a one-entry table, an RSS QP, an ETH rule. */
static int cv_target(struct cv *c, struct ibv_wq *wq)
{
	struct ibv_rwq_ind_table_init_attr ta = { .ind_tbl = &wq };

	c->tbl = ibv_create_rwq_ind_table(c->ctx, &ta);
	if (!c->tbl)
		return -1;
	c->qp = rss_qp(c->ctx, c->pd, c->tbl, key, 0);
	if (!c->qp)
		return -1;
	c->flow = mac_flow(c->qp, cv_dmac);
	return c->flow ? 0 : -1;
}

static int cv_untarget(struct cv *c)
{
	int err = 0;

	if (c->flow && ibv_destroy_flow(c->flow))
		err = -1;
	if (c->qp && ibv_destroy_qp(c->qp))
		err = -1;
	if (c->tbl && ibv_destroy_rwq_ind_table(c->tbl))
		err = -1;
	c->flow = NULL;
	c->qp = NULL;
	c->tbl = NULL;
	return err;
}

/* Post one receive into slot 0 of rbuf (cleared), send @frame, poll it. */
static int cv_exchange(struct cv *c, struct ibv_wq *wq, const uint8_t *frame,
		       size_t len, struct cv_wc *out)
{
	struct ibv_sge rsge = { (uintptr_t)c->rbuf, CV_SLOT, c->rmr->lkey };
	struct ibv_sge ssge = { (uintptr_t)c->sbuf, (uint32_t)len,
				c->smr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 0xc0 + c->posted, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_poll_cq_attr pa = {};
	time_t end = time(NULL) + 60;
	struct ibv_wc swc;
	int r;

	memset(c->rbuf, 0, sizeof(c->rbuf));
	memcpy(c->sbuf, frame, len);
	if (ibv_post_wq_recv(wq, &rwr, &rbad))
		return -1;
	c->posted++;
	if (ibv_post_send(c->sqp, &swr, &sbad))
		return -1;
	do
		r = ibv_poll_cq(c->scq, 1, &swc);
	while (r == 0 && time(NULL) < end);
	if (r != 1 || swc.status != IBV_WC_SUCCESS)
		return -1;
	do
		r = ibv_start_poll(c->cqx, &pa);
	while (r == ENOENT && time(NULL) < end);
	if (r)
		return -1;
	out->wr_id = c->cqx->wr_id;
	out->status = c->cqx->status;
	out->byte_len = ibv_wc_read_byte_len(c->cqx);
	out->qp_num = ibv_wc_read_qp_num(c->cqx);
	out->cvlan = ibv_wc_read_cvlan(c->cqx);
	ibv_end_poll(c->cqx);
	return out->wr_id == rwr.wr_id ? 0 : -1;
}

/* The frame arrived as @want (@len bytes) with @tci read back. */
static int cv_got(struct cv *c, struct ibv_wq *wq, const struct cv_wc *w,
		  const uint8_t *want, size_t len, uint16_t tci)
{
	return w->status == IBV_WC_SUCCESS && w->qp_num == wq->wq_num &&
	       w->byte_len == len && !memcmp(c->rbuf, want, len) &&
	       c->rbuf[len] == 0 && w->cvlan == tci;
}

static void cv_flags(struct ibv_wq *wq, uint32_t flags, const char *name)
{
	struct ibv_wq_attr mod = {
		.attr_mask = IBV_WQ_ATTR_FLAGS,
		.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING,
		.flags = flags,
	};

	T(!ibv_modify_wq(wq, &mod), name);
}

/* A 4-deep receive WQ on @c's PD and CQ, created with @flags (0: none). */
static struct ibv_wq *cv_wq(struct cv *c, uint32_t flags)
{
	struct ibv_wq_init_attr wa = {
		.comp_mask = flags ? IBV_WQ_INIT_ATTR_FLAGS : 0,
		.create_flags = flags,
	};

	return rq_wq(c->ctx, &wa, c->pd, ibv_cq_ex_to_cq(c->cqx), 4);
}

static void cvlan_cases(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static struct cv c;
	struct ibv_wq_attr mod = { .attr_mask = IBV_WQ_ATTR_STATE,
				   .wq_state = IBV_WQS_RDY };
	uint8_t tagged[128], plain[128], stripped[128];
	size_t tlen, plen;
	struct ibv_wq *wq, *wq2;
	struct cv_wc w = {};

	c.ctx = ctx;
	c.pd = pd;
	T(!cv_setup(&c), "cvlan: CQ with IBV_WC_EX_WITH_CVLAN, raw sender in RTS");
	if (!c.sqp || !c.cqx || !c.rmr)
		return;
	tlen = cv_frame(tagged, 1, 0x11);
	plen = cv_frame(plain, 0, 0x11);
	memcpy(stripped, plain, plen);
	wq = cv_wq(&c, IBV_WQ_FLAGS_CVLAN_STRIPPING);
	T(wq != NULL, "create_wq with CVLAN_STRIPPING");
	if (!wq)
		return;
	T(!ibv_modify_wq(wq, &mod), "cvlan WQ: RESET -> RDY");
	T(!cv_target(&c, wq),
	  "one-entry table, RSS QP without hash fields, ETH rule");
	T(!cv_exchange(&c, wq, tagged, tlen, &w) &&
	  cv_got(&c, wq, &w, stripped, tlen - 4, CV_TCI),
	  "tagged frame: tag stripped, byte_len - 4, ibv_wc_read_cvlan = TCI");
	printf("# status %d byte_len %u (sent %zu) cvlan %#x\n", w.status,
	       w.byte_len, tlen, w.cvlan);
	T(!cv_exchange(&c, wq, plain, plen, &w) &&
	  cv_got(&c, wq, &w, plain, plen, 0),
	  "untagged frame on a stripping WQ: whole, cvlan 0");
	cv_flags(wq, 0, "modify_wq: CVLAN_STRIPPING off");
	T(!cv_exchange(&c, wq, tagged, tlen, &w) &&
	  cv_got(&c, wq, &w, tagged, tlen, 0),
	  "stripping off: the tagged frame whole, cvlan 0");
	cv_flags(wq, IBV_WQ_FLAGS_CVLAN_STRIPPING,
		 "modify_wq: CVLAN_STRIPPING on");
	T(!cv_exchange(&c, wq, tagged, tlen, &w) &&
	  cv_got(&c, wq, &w, stripped, tlen - 4, CV_TCI),
	  "stripping on again: tag stripped");
	T(!cv_untarget(&c), "cvlan: rule, RSS QP and table destroyed");

	/* a WQ created without the flag */
	wq2 = cv_wq(&c, 0);
	T(wq2 && !ibv_modify_wq(wq2, &mod) && !cv_target(&c, wq2),
	  "plain WQ behind its own RSS QP");
	if (wq2) {
		T(!cv_exchange(&c, wq2, tagged, tlen, &w) &&
		  cv_got(&c, wq2, &w, tagged, tlen, 0),
		  "WQ without the flag: the tagged frame whole, cvlan 0");
		T(!cv_untarget(&c) && !ibv_destroy_wq(wq2), "plain WQ destroyed");
	}
	T(!ibv_destroy_wq(wq), "cvlan WQ destroyed");
	ibv_destroy_qp(c.sqp);
	ibv_dereg_mr(c.smr);
	ibv_dereg_mr(c.rmr);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(c.cqx));
}

/* ---- DELAY_DROP ------------------------------------------------------ */

static const char *dl_dev;

/* A port counter of dl_dev (sysfs; init's /sys if this one lacks it). */
static long long dl_counter(const char *name)
{
	static const char *const fmt[] = {
		"/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		"/proc/1/root/sys/class/infiniband/%s/ports/1/hw_counters/%s",
	};
	long long v = -1;
	char path[256];
	unsigned int i;
	FILE *f;

	for (i = 0; i < 2 && v < 0; i++) {
		snprintf(path, sizeof(path), fmt[i], dl_dev, name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Wait (30 s at most) for counter @name to reach @want. */
static int dl_wait(const char *name, long long want)
{
	time_t end = time(NULL) + 30;
	long long v;

	do {
		v = dl_counter(name);
		if (v >= want)
			return v == want ? 0 : -1;
		usleep(1000);
	} while (time(NULL) < end);
	printf("# %s: %lld, waited for %lld\n", name, v, want);
	return -1;
}

/* Send @frame from the raw QP and reap its send completion. */
static int dl_send(struct cv *c, const uint8_t *frame, size_t len)
{
	struct ibv_sge ssge = { (uintptr_t)c->sbuf, (uint32_t)len,
				c->smr->lkey };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	time_t end = time(NULL) + 60;
	struct ibv_wc swc;
	int r;

	memcpy(c->sbuf, frame, len);
	if (ibv_post_send(c->sqp, &swr, &sbad))
		return -1;
	do
		r = ibv_poll_cq(c->scq, 1, &swc);
	while (r == 0 && time(NULL) < end);
	return r == 1 && swc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* Post @n receives into slots 0.. of rbuf (cleared), wr_id 0xd0 + slot. */
static int dl_post(struct cv *c, struct ibv_wq *wq, int n)
{
	struct ibv_sge rsge[4];
	struct ibv_recv_wr rwr[4], *rbad;
	int i;

	memset(c->rbuf, 0, sizeof(c->rbuf));
	for (i = 0; i < n; i++) {
		rsge[i].addr = (uintptr_t)(c->rbuf + i * CV_SLOT);
		rsge[i].length = CV_SLOT;
		rsge[i].lkey = c->rmr->lkey;
		rwr[i].wr_id = 0xd0 + i;
		rwr[i].sg_list = &rsge[i];
		rwr[i].num_sge = 1;
		rwr[i].next = i + 1 < n ? &rwr[i + 1] : NULL;
	}
	return ibv_post_wq_recv(wq, rwr, &rbad) ? -1 : 0;
}

/* Reap @n completions: slot i holds the frame of seed @seed + i, whole. */
static int dl_reap(struct cv *c, struct ibv_wq *wq, int n, uint8_t seed)
{
	struct ibv_poll_cq_attr pa = {};
	time_t end = time(NULL) + 60;
	uint8_t want[128];
	size_t len;
	int i, r;

	for (i = 0; i < n; i++) {
		do
			r = ibv_start_poll(c->cqx, &pa);
		while (r == ENOENT && time(NULL) < end);
		if (r)
			return -1;
		len = cv_frame(want, 0, (uint8_t)(seed + i));
		r = c->cqx->wr_id == 0xd0u + i &&
		    c->cqx->status == IBV_WC_SUCCESS &&
		    ibv_wc_read_qp_num(c->cqx) == wq->wq_num &&
		    ibv_wc_read_byte_len(c->cqx) == len &&
		    !memcmp(c->rbuf + i * CV_SLOT, want, len) &&
		    c->rbuf[i * CV_SLOT + len] == 0;
		if (!r)
			printf("# completion %d: wr_id %#llx status %d len %u\n",
			       i, (unsigned long long)c->cqx->wr_id,
			       c->cqx->status, ibv_wc_read_byte_len(c->cqx));
		ibv_end_poll(c->cqx);
		if (!r)
			return -1;
	}
	return 0;
}

/* An untagged frame of @seed sent, and reaped from @wq with its bytes. */
static int dl_one(struct cv *c, struct ibv_wq *wq, uint8_t seed)
{
	uint8_t f[128];
	size_t len = cv_frame(f, 0, seed);

	return dl_send(c, f, len) || dl_reap(c, wq, 1, seed) ? -1 : 0;
}

/* Send @n frames (seeds @seed..) to a WQ with no WQE; they must wait. */
static int dl_park(struct cv *c, int n, uint8_t seed)
{
	long long held = dl_counter("rwq_delayed");
	uint8_t f[128];
	size_t len;
	int i;

	for (i = 0; i < n; i++) {
		len = cv_frame(f, 0, (uint8_t)(seed + i));
		if (dl_send(c, f, len))
			return -1;
	}
	return held < 0 ? -1 : dl_wait("rwq_delayed", held + n);
}

/* Nothing more completes on the WQs' CQ (within 100 ms). */
static int dl_quiet(struct cv *c)
{
	struct ibv_poll_cq_attr pa = {};
	int r;

	usleep(100000);
	r = ibv_start_poll(c->cqx, &pa);
	if (!r)
		ibv_end_poll(c->cqx);
	return r == ENOENT ? 0 : -1;
}

static void delay_cases(struct ibv_context *ctx, struct ibv_pd *pd,
			const char *dev)
{
	static struct cv c;
	struct ibv_wq_attr mod = { .attr_mask = IBV_WQ_ATTR_STATE,
				   .wq_state = IBV_WQS_RDY };
	struct ibv_wq_attr fl = { .attr_mask = IBV_WQ_ATTR_FLAGS,
				  .flags_mask = IBV_WQ_FLAGS_DELAY_DROP };
	long long dd, nw, held;
	uint8_t f[128];
	struct ibv_wq *wq, *wq2;
	size_t len;

	dl_dev = dev;
	c.ctx = ctx;
	c.pd = pd;
	T(!cv_setup(&c), "delay: raw sender in RTS");
	if (!c.sqp || !c.cqx || !c.rmr)
		return;
	T(dl_counter("rwq_delayed") >= 0 &&
	  dl_counter("rwq_delay_dropped") >= 0,
	  "delay: counters rwq_delayed and rwq_delay_dropped exist");
	wq = cv_wq(&c, IBV_WQ_FLAGS_DELAY_DROP);
	T(wq != NULL, "create_wq with DELAY_DROP");
	if (!wq)
		return;
	T(!ibv_modify_wq(wq, &mod) && !cv_target(&c, wq),
	  "delay WQ: RDY behind its RSS QP");
	dd = dl_counter("rwq_delay_dropped");

	/* a frame with no WQE waits; the receive posted soon after gets it */
	T(!dl_park(&c, 1, 0x41), "no WQE: the frame waits (rwq_delayed + 1)");
	T(!dl_post(&c, wq, 1) && !dl_reap(&c, wq, 1, 0x41) && !dl_quiet(&c),
	  "a receive posted soon after: the frame lands whole");

	/* several wait in order */
	T(!dl_park(&c, 3, 0x51), "three frames wait");
	T(!dl_post(&c, wq, 3) && !dl_reap(&c, wq, 3, 0x51) && !dl_quiet(&c),
	  "three receives: the three frames land whole, in order");
	T(dl_counter("rwq_delay_dropped") == dd, "none expired so far");

	/* one never given a WQE expires and is counted */
	T(!dl_park(&c, 1, 0x61), "a frame waits again");
	T(!dl_wait("rwq_delay_dropped", dd + 1),
	  "no WQE before the deadline: dropped, rwq_delay_dropped + 1");
	T(!dl_post(&c, wq, 1) && !dl_quiet(&c),
	  "the expired frame is gone: a new receive stays posted");
	T(!dl_one(&c, wq, 0x71),
	  "the next frame takes that receive");

	/* a move to RESET drops what waits */
	T(!dl_park(&c, 2, 0x81), "two frames wait");
	mod.wq_state = IBV_WQS_RESET;
	T(!ibv_modify_wq(wq, &mod) && !dl_wait("rwq_delay_dropped", dd + 3),
	  "RDY -> RESET drops them (rwq_delay_dropped + 2)");
	mod.wq_state = IBV_WQS_RDY;
	T(!ibv_modify_wq(wq, &mod) && !dl_post(&c, wq, 1) && !dl_quiet(&c),
	  "RESET -> RDY: nothing left to deliver");
	T(!dl_one(&c, wq, 0x91),
	  "then a frame lands as usual");

	/* destroy with a frame waiting */
	T(!dl_park(&c, 1, 0xa1), "a frame waits at destroy");
	T(!cv_untarget(&c) && !ibv_destroy_wq(wq) &&
	  !dl_wait("rwq_delay_dropped", dd + 4),
	  "destroy_wq drops it (rwq_delay_dropped + 1)");

	/* without the flag: dropped at once; the flag set by modify_wq */
	wq2 = cv_wq(&c, 0);
	T(wq2 && !ibv_modify_wq(wq2, &mod) && !cv_target(&c, wq2),
	  "plain WQ behind its own RSS QP");
	if (!wq2)
		goto out;
	nw = dl_counter("rwq_no_wqe");
	held = dl_counter("rwq_delayed");
	len = cv_frame(f, 0, 0xb1);
	T(!dl_send(&c, f, len) && !dl_wait("rwq_no_wqe", nw + 1) &&
	  dl_counter("rwq_delayed") == held,
	  "WQ without DELAY_DROP: dropped at once (rwq_no_wqe + 1)");
	T(!dl_post(&c, wq2, 1) && !dl_quiet(&c),
	  "the dropped frame is not delivered later");
	T(!dl_one(&c, wq2, 0xc1),
	  "the next frame takes the receive");
	fl.flags = IBV_WQ_FLAGS_DELAY_DROP;
	T(!ibv_modify_wq(wq2, &fl), "modify_wq: DELAY_DROP on");
	T(!dl_park(&c, 1, 0xd1) && !dl_post(&c, wq2, 1) &&
	  !dl_reap(&c, wq2, 1, 0xd1),
	  "DELAY_DROP set by modify_wq: the frame waits and lands");
	fl.flags = 0;
	T(!ibv_modify_wq(wq2, &fl), "modify_wq: DELAY_DROP off");
	T(!cv_untarget(&c) && !ibv_destroy_wq(wq2), "plain WQ destroyed");
out:
	ibv_destroy_qp(c.sqp);
	ibv_dereg_mr(c.smr);
	ibv_dereg_mr(c.rmr);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(c.cqx));
}

int main(int argc, char **argv)
{
	struct ibv_wq_init_attr wa = {};
	struct ibv_wq_attr mod = {};
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[8];
	struct ibv_context *ctx;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_device_attr_ex dx;
	struct ibv_wq *wq, *wqs[2];
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint32_t max_sge;
	char buf[256];
	int i, n;

	ctx = argc > 1 ? open_dev(argv[1]) : NULL;
	if (!ctx) {
		printf("not ok - device %s\n", argc > 1 ? argv[1] : "?");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	T(ctx && pd && cq && mr, "setup");
	T(!ibv_query_device_ex(ctx, NULL, &dx) &&
	  dx.rss_caps.supported_qpts == 1u << IBV_QPT_RAW_PACKET &&
	  dx.rss_caps.max_rwq_indirection_tables == 4096 &&
	  dx.rss_caps.max_rwq_indirection_table_size == 256 &&
	  dx.rss_caps.rx_hash_function == IBV_RX_HASH_FUNC_TOEPLITZ &&
	  dx.rss_caps.rx_hash_fields_mask == 0xff &&
	  dx.max_wq_type_rq == 4096 &&
	  (dx.raw_packet_caps & IBV_RAW_PACKET_CAP_CVLAN_STRIPPING) &&
	  !(dx.raw_packet_caps & IBV_RAW_PACKET_CAP_SCATTER_FCS) &&
	  (dx.raw_packet_caps & IBV_RAW_PACKET_CAP_DELAY_DROP),
	  "rss caps advertised exactly, CVLAN_STRIPPING and DELAY_DROP the WQ flag caps");

	wq = rq_wq(ctx, &wa, pd, cq, 5);
	T(wq && wa.max_wr >= 5 && wa.max_wr <= 8 && wa.max_sge >= 1 &&
	  wq->wq_num && wq->state == IBV_WQS_RESET,
	  "create_wq writes max_wr/max_sge back, at least as asked");
	max_sge = wa.max_sge;
	printf("# max_wr %u max_sge %u wqn %u\n", wa.max_wr, wa.max_sge,
	       wq ? wq->wq_num : 0);
	wa.max_wr = dx.orig_attr.max_qp_wr + 1;
	errno = 0;
	T(!ibv_create_wq(ctx, &wa) && errno == EINVAL, "max_wr over the limit: EINVAL");
	wa.max_wr = 4;
	wa.max_sge = dx.orig_attr.max_sge + 1;
	errno = 0;
	T(!ibv_create_wq(ctx, &wa) && errno == EINVAL, "max_sge over the limit: EINVAL");
	wa.max_sge = 1;
	wa.comp_mask = IBV_WQ_INIT_ATTR_FLAGS;
	/*
	 * 1 << 0 is CVLAN_STRIPPING (cvlan_cases()), 1 << 2 DELAY_DROP
	 * (delay_cases()); the others are refused
	 */
	for (i = 1; i < 4; i += 2) {
		char name[64];

		wa.create_flags = 1u << i;
		errno = 0;
		snprintf(name, sizeof(name), "create flag %#x: EOPNOTSUPP", 1u << i);
		T(!ibv_create_wq(ctx, &wa) && errno == EOPNOTSUPP, name);
	}
	wa.comp_mask = 0;
	wa.create_flags = 0;

	/* post in RDY, ERR flushes with wr_ids and qp_num = wq_num */
	sge.addr = (uintptr_t)buf;
	sge.length = 64;
	sge.lkey = mr->lkey;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	mod.attr_mask = IBV_WQ_ATTR_STATE;
	mod.wq_state = IBV_WQS_RDY;
	T(!ibv_modify_wq(wq, &mod), "RESET -> RDY");
	for (i = 0; i < 3; i++) {
		rwr.wr_id = 0x100 + i;
		ibv_post_wq_recv(wq, &rwr, &bad);
	}
	rwr.wr_id = 0x200;
	rwr.num_sge = max_sge + 1;
	T(ibv_post_wq_recv(wq, &rwr, &bad) == EINVAL && bad == &rwr,
	  "num_sge above max_sge: EINVAL, bad_wr");
	rwr.num_sge = 1;
	for (i = 0, n = 0; i < 16; i++) {
		rwr.wr_id = 0x300 + i;
		if (ibv_post_wq_recv(wq, &rwr, &bad))
			break;
		n++;
	}
	T(n == 8 - 3 && bad == &rwr, "full ring: ENOMEM after max_wr posts");
	mod.wq_state = IBV_WQS_ERR;
	T(!ibv_modify_wq(wq, &mod), "RDY -> ERR");
	n = poll_n(cq, wc, 8, 60);
	T(n == 8 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 0x100 &&
	  wc[2].wr_id == 0x102 && wc[3].wr_id == 0x300 && wc[7].wr_id == 0x304 &&
	  wc[7].status == IBV_WC_WR_FLUSH_ERR && wc[0].qp_num == wq->wq_num,
	  "ERR flushes every posted WQE in order, qp_num = wq_num");
	rwr.wr_id = 0x400;
	T(!ibv_post_wq_recv(wq, &rwr, &bad), "post in ERR");
	n = poll_n(cq, wc, 1, 60);
	T(n == 1 && wc[0].wr_id == 0x400 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	  "a post in ERR is flushed");
	mod.wq_state = IBV_WQS_RDY;
	errno = 0;
	T(ibv_modify_wq(wq, &mod) == EINVAL, "ERR -> RDY: EINVAL");
	mod.attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE;
	mod.curr_wq_state = IBV_WQS_RDY;
	mod.wq_state = IBV_WQS_RESET;
	T(ibv_modify_wq(wq, &mod) == EINVAL, "wrong current state: EINVAL");
	mod.curr_wq_state = IBV_WQS_ERR;
	T(!ibv_modify_wq(wq, &mod), "ERR -> RESET (current state given)");
	mod.attr_mask = IBV_WQ_ATTR_FLAGS;
	mod.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	mod.flags = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	T(!ibv_modify_wq(wq, &mod), "modify flags: CVLAN_STRIPPING on");
	mod.flags = 0;
	T(!ibv_modify_wq(wq, &mod), "modify flags: CVLAN_STRIPPING off");
	mod.flags_mask = IBV_WQ_FLAGS_DELAY_DROP;
	mod.flags = IBV_WQ_FLAGS_DELAY_DROP;
	T(!ibv_modify_wq(wq, &mod), "modify flags: DELAY_DROP on");
	mod.flags = 0;
	T(!ibv_modify_wq(wq, &mod), "modify flags: DELAY_DROP off");
	for (i = 1; i < 4; i += 2) {
		char name[64];

		mod.flags_mask = 1u << i;
		mod.flags = 1u << i;
		snprintf(name, sizeof(name), "modify flag %#x: EOPNOTSUPP",
			 1u << i);
		T(ibv_modify_wq(wq, &mod) == EOPNOTSUPP, name);
	}
	mod.attr_mask = IBV_WQ_ATTR_STATE;
	mod.wq_state = IBV_WQS_RDY;
	T(!ibv_modify_wq(wq, &mod), "RESET -> RDY again");
	rwr.wr_id = 0x500;
	ibv_post_wq_recv(wq, &rwr, &bad);
	mod.wq_state = IBV_WQS_RESET;
	T(!ibv_modify_wq(wq, &mod) && poll_n(cq, wc, 1, 60) == 0,
	  "RDY -> RESET discards without completions");

	/* a table holds its WQs, an RSS QP its table */
	wqs[0] = wq;
	wqs[1] = wq;
	ta.log_ind_tbl_size = 1;
	ta.ind_tbl = wqs;
	tbl = ibv_create_rwq_ind_table(ctx, &ta);
	T(tbl != NULL, "create_rwq_ind_table (the same WQ twice)");
	ta.log_ind_tbl_size = 9;
	errno = 0;
	{
		struct ibv_wq *many[512];

		for (i = 0; i < 512; i++)
			many[i] = wq;
		ta.ind_tbl = many;
		T(!ibv_create_rwq_ind_table(ctx, &ta) && errno == EINVAL,
		  "table of 512 (above 256): EINVAL");
	}
	T(ibv_destroy_wq(wq) == EBUSY, "destroy_wq of a WQ in a table: EBUSY");
	qp = rss_qp(ctx, pd, tbl, key, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	T(qp != NULL, "RSS QP created");
	if (qp) {
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT,
					  .port_num = 1 };
		struct ibv_send_wr swr = {}, *sbad;

		T(ibv_destroy_rwq_ind_table(tbl) == EBUSY,
		  "destroy of a table an RSS QP uses: EBUSY");
		T(ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT) == EOPNOTSUPP,
		  "modify_qp of an RSS QP: EOPNOTSUPP");
		T(ibv_post_recv(qp, &rwr, &bad) != 0 && bad == &rwr,
		  "post_recv on an RSS QP fails");
		T(ibv_post_send(qp, &swr, &sbad) != 0 && sbad == &swr,
		  "post_send on an RSS QP fails");
		T(!ibv_destroy_qp(qp), "destroy RSS QP");
	}
	T(!ibv_destroy_rwq_ind_table(tbl), "destroy table once the QP is gone");
	T(!ibv_destroy_wq(wq), "destroy WQ once the table is gone");
	cvlan_cases(ctx, pd);
	delay_cases(ctx, pd, argv[1]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("# wq_busy: %d failure(s)\n", fails);
	return fails ? 1 : 0;
}
