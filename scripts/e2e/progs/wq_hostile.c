// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RSS delivery edge cases: frames steered (ETH flow) to an RSS QP whose
 * one-entry table (no hash field) names one WQ.  A raw QP on the same
 * port sends them.  Checks: no WQE -> rwq_no_wqe; WQ in RESET ->
 * rwq_dropped; a hostile producer index -> IBV_EVENT_WQ_FATAL,
 * rwq_dropped, and RESET repairs it; a bad lkey -> IBV_WC_LOC_PROT_ERR,
 * the WQ in error and the next WQE flushed; a short buffer ->
 * IBV_WC_LOC_LEN_ERR, the WQ still ready; num_sge 0xffffffff written into
 * the ring -> IBV_WC_LOC_QP_OP_ERR, the WQ in error and the next WQE
 * flushed; a good frame lands whole.
 *   wq_hostile DEV
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shca.h"

#include "e2e_lib.h"

static int fails;
static const char *devname;

#define T(cond, name)                                                          \
	do {                                                                   \
		if (cond)                                                      \
			printf("ok - %s\n", name);                             \
		else {                                                         \
			printf("not ok - %s\n", name);                         \
			fails++;                                               \
		}                                                              \
		fflush(stdout);                                                \
	} while (0)

static const uint8_t dmac[6] = { 0x02, 0xca, 0x5e, 0, 0, 0x19 };
static const uint8_t key[40] = { 1 };

static long stat(const char *name)
{
	char cmd[128], word[64];
	long v = -1, x;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1", devname);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s", word) == 1) {
		if (!strcmp(word, name) && fscanf(f, "%ld", &x) == 1)
			v = x;
	}
	pclose(f);
	return v;
}

struct sender {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[2048];
};

static int send_frame(struct sender *s, unsigned int len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	unsigned int i;

	memcpy(s->buf, dmac, 6);
	memcpy(s->buf + 6, "\x02\xca\x5e\x00\x00\x1a\x08\x00", 8);
	for (i = 14; i < len; i++)
		s->buf[i] = (uint8_t)(i * 7 + len);
	if (ibv_post_send(s->qp, &wr, &bad))
		return -1;
	return poll_n(s->cq, &wc, 1, 60) == 1 && wc.status == IBV_WC_SUCCESS ?
	       0 : -1;
}

static int wait_event(struct ibv_context *ctx, enum ibv_event_type type)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int ok;

	if (poll(&p, 1, 30000) != 1 || ibv_get_async_event(ctx, &ev))
		return 0;
	ok = ev.event_type == type;
	ibv_ack_async_event(&ev);
	return ok;
}

static void post1(struct ibv_wq *wq, struct ibv_mr *mr, void *buf,
		  uint32_t len, uint32_t lkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	(void)mr;
	if (ibv_post_wq_recv(wq, &wr, &bad))
		printf("# post_wq_recv failed\n");
}

/*
 * The WQE at @idx of @wq gets num_sge 0xffffffff and twelve zero-length
 * SGEs (as many as its slot holds), straight in the mapped ring.
 */
static void spoil_huge(struct shca_wq *wq, uint32_t idx, uint32_t lkey,
		       void *buf)
{
	struct shca_ring *r = &wq->ring;
	struct shca_recv_wqe *w = (void *)(r->entries +
		((size_t)(idx & r->mask) << r->entry_shift));
	struct shca_sge *sge = (struct shca_sge *)(w + 1);
	size_t n = (((size_t)1 << r->entry_shift) - sizeof(*w)) / sizeof(*sge);
	size_t i;

	for (i = 0; i < n && i < 12; i++) {
		sge[i].addr = (uintptr_t)buf;
		sge[i].length = 0;
		sge[i].lkey = lkey;
	}
	w->num_sge = 0xffffffffu;
}

static int set_state(struct ibv_wq *wq, enum ibv_wq_state st)
{
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE,
				 .wq_state = st };

	return ibv_modify_wq(wq, &a);
}

/*
 * A frame (case @send) to WQEs @id and @id + 1: the first completes with
 * @status, the second is flushed (case @name); the WQ is then in error
 * (case @err); RESET and RDY make it ready again.
 */
static void err_then_flush(struct sender *s, struct ibv_cq *cq,
			   struct ibv_wq *wq, const char *send, uint64_t id,
			   enum ibv_wc_status status, const char *name,
			   const char *err)
{
	struct ibv_wc wc[2];

	T(!send_frame(s, 100), send);
	T(poll_n(cq, wc, 2, 60) == 2 && wc[0].wr_id == id &&
	  wc[0].status == status && wc[1].wr_id == id + 1 &&
	  wc[1].status == IBV_WC_WR_FLUSH_ERR, name);
	T(set_state(wq, IBV_WQS_RDY) == EINVAL, err);
	set_state(wq, IBV_WQS_RESET);
	set_state(wq, IBV_WQS_RDY);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qi = {};
	struct ibv_wq_init_attr wa = {};
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} __attribute__((packed, aligned(8))) fa = {};
	struct ibv_qp_attr at = {};
	struct ibv_context *ctx;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_flow *flow;
	struct shca_rwq *rwq;
	struct ibv_wq *wq;
	struct ibv_qp *rss;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct sender s;
	struct ibv_wc wc[4];
	static uint8_t rbuf[4096];
	long a, b;

	devname = argc > 1 ? argv[1] : "shca9";
	ctx = open_dev(devname);
	if (!ctx) {
		printf("not ok - device %s\n", devname);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	wq = rq_wq(ctx, &wa, pd, cq, 4);
	ta.log_ind_tbl_size = 0;
	ta.ind_tbl = &wq;
	tbl = wq ? ibv_create_rwq_ind_table(ctx, &ta) : NULL;
	rss = tbl ? rss_qp(ctx, pd, tbl, key, 0) : NULL;
	T(ctx && pd && cq && mr && wq && tbl && rss,
	  "one-entry table, RSS QP with no hash field");
	if (!rss)
		return 1;
	fa.attr.type = IBV_FLOW_ATTR_NORMAL;
	fa.attr.size = sizeof(fa);
	fa.attr.num_of_specs = 1;
	fa.attr.port = 1;
	fa.eth.type = IBV_FLOW_SPEC_ETH;
	fa.eth.size = sizeof(fa.eth);
	memcpy(fa.eth.val.dst_mac, dmac, 6);
	memset(fa.eth.mask.dst_mac, 0xff, 6);
	flow = ibv_create_flow(rss, (struct ibv_flow_attr *)&fa);
	T(flow != NULL, "ETH flow on the RSS QP");

	s.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qi.qp_type = IBV_QPT_RAW_PACKET;
	qi.send_cq = s.cq;
	qi.recv_cq = s.cq;
	qi.cap.max_send_wr = 4;
	qi.cap.max_send_sge = 1;
	s.qp = ibv_create_qp(pd, &qi);
	s.mr = ibv_reg_mr(pd, s.buf, sizeof(s.buf), 0);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	ibv_modify_qp(s.qp, &at, IBV_QP_STATE | IBV_QP_PORT);
	at.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(s.qp, &at, IBV_QP_STATE);
	at.qp_state = IBV_QPS_RTS;
	ibv_modify_qp(s.qp, &at, IBV_QP_STATE);

	/* RESET: dropped */
	a = stat("rwq_dropped");
	T(!send_frame(&s, 100), "send 1");
	usleep(500000);
	b = stat("rwq_dropped");
	T(b == a + 1 && poll_n(cq, wc, 1, 1) == 0,
	  "a WQ in RESET: dropped and counted (rwq_dropped)");

	/* RDY, nothing posted: no WQE */
	set_state(wq, IBV_WQS_RDY);
	a = stat("rwq_no_wqe");
	T(!send_frame(&s, 100), "send 2");
	usleep(500000);
	T(stat("rwq_no_wqe") == a + 1, "no WQE: dropped and counted (rwq_no_wqe)");

	/* a good frame lands whole */
	post1(wq, mr, rbuf, 2048, mr->lkey, 1);
	T(!send_frame(&s, 200), "send 3");
	T(poll_n(cq, wc, 1, 60) == 1 && wc[0].status == IBV_WC_SUCCESS &&
	  wc[0].wr_id == 1 && wc[0].byte_len == 200 &&
	  wc[0].qp_num == wq->wq_num && wc[0].opcode == IBV_WC_RECV &&
	  !memcmp(rbuf, s.buf, 200), "a frame lands whole (fields 0: table[0])");

	/* short buffer: LOC_LEN_ERR, WQ still ready */
	post1(wq, mr, rbuf, 64, mr->lkey, 2);
	T(!send_frame(&s, 200), "send 4");
	T(poll_n(cq, wc, 1, 60) == 1 && wc[0].wr_id == 2 &&
	  wc[0].status == IBV_WC_LOC_LEN_ERR, "short buffer: IBV_WC_LOC_LEN_ERR");
	post1(wq, mr, rbuf, 2048, mr->lkey, 3);
	T(!send_frame(&s, 150), "send 5");
	T(poll_n(cq, wc, 1, 60) == 1 && wc[0].wr_id == 3 &&
	  wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == 150,
	  "after LOC_LEN_ERR the WQ still receives");

	/* bad lkey: LOC_PROT_ERR, the WQ in error, the rest flushed */
	post1(wq, mr, rbuf, 2048, mr->lkey ^ 0x100, 4);
	post1(wq, mr, rbuf, 2048, mr->lkey, 5);
	err_then_flush(&s, cq, wq, "send 6", 4, IBV_WC_LOC_PROT_ERR,
		       "bad lkey: IBV_WC_LOC_PROT_ERR, the next WQE flushed",
		       "the WQ is in error (ERR -> RDY refused)");

	/*
	 * num_sge 0xffffffff and twelve zero-length SGEs, written into the
	 * mapped ring: LOC_QP_OP_ERR, the WQ in error, the next WQE flushed
	 */
	rwq = to_shca_rwq(wq);
	post1(wq, mr, rbuf, 2048, mr->lkey, 7);
	post1(wq, mr, rbuf, 2048, mr->lkey, 8);
	spoil_huge(&rwq->wq, rwq->wq.prod - 2, mr->lkey, rbuf);
	err_then_flush(&s, cq, wq, "send 7", 7, IBV_WC_LOC_QP_OP_ERR,
		       "num_sge 0xffffffff: IBV_WC_LOC_QP_OP_ERR, the next WQE flushed",
		       "the WQ is in error after num_sge 0xffffffff (ERR -> RDY refused)");

	/* hostile producer index: fatal event, dropped; RESET repairs */
	a = stat("rwq_dropped");
	__atomic_store_n(&rwq->wq.ring.ctl->prod,
			 rwq->wq.ring.ctl->cons + 1000, __ATOMIC_RELEASE);
	T(!send_frame(&s, 100), "send 7b");
	T(wait_event(ctx, IBV_EVENT_WQ_FATAL), "hostile prod: IBV_EVENT_WQ_FATAL");
	T(stat("rwq_dropped") == a + 1, "hostile prod: dropped and counted");
	T(set_state(wq, IBV_WQS_RESET) == 0, "ERR -> RESET");
	rwq->wq.prod = rwq->wq.ring.ctl->prod;	/* resync our producer */
	set_state(wq, IBV_WQS_RDY);
	post1(wq, mr, rbuf, 2048, mr->lkey, 6);
	T(!send_frame(&s, 120), "send 8");
	T(poll_n(cq, wc, 1, 60) == 1 && wc[0].wr_id == 6 &&
	  wc[0].status == IBV_WC_SUCCESS && wc[0].byte_len == 120,
	  "after RESET the WQ receives again");

	ibv_destroy_flow(flow);
	ibv_destroy_qp(rss);
	ibv_destroy_rwq_ind_table(tbl);
	T(!ibv_destroy_wq(wq), "teardown");
	ibv_destroy_qp(s.qp);
	ibv_dereg_mr(s.mr);
	ibv_destroy_cq(s.cq);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("# wq_hostile: %d failure(s)\n", fails);
	return fails ? 1 : 0;
}
