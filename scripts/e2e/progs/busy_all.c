// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * busy_all: every kind of object shca makes, all live and busy at once on
 * one device, for teardown.sh to tear down from outside (kill -9, the
 * netdev deleted, rmmod).
 *
 *   busy_all DEV GIDX [moves-data]
 *
 * (moves-data: only check that DEV moves data - three UD datagrams to
 * itself, compared - and exit 0 if it does.)
 *
 * On DEV (loopback: every QP talks to one on the same device, through the
 * RoCE v2 GID at index GIDX; runs as root for the raw QPs and flows):
 * a PD, an MR over one buffer (MW_BIND allowed), a type 1 and a type 2
 * window bound to it, a CQ (every send queue's completions), an extended
 * CQ on a completion channel, armed again after each event (every
 * receive's), an RC pair (SEND, RDMA WRITE through the type 2 window,
 * RDMA READ through the type 1 window), a UC pair (SEND), UD QPs with an
 * AH, receiving through a basic SRQ, XRC (an XRCD, an XRC SRQ, an INI
 * QP sending to a TGT QP), a TM SRQ behind an RC QP (a tag added, then an
 * eager message matching it, over and over; one decoy tag stays posted,
 * its CQ an extended CQ with the TM fields), and raw Ethernet: a raw QP
 * sending frames that a flow rule steers to a second raw QP and another
 * rule to an RSS QP over a one-entry indirection table of a WQ.  The
 * provider maps every SQ, RQ, SRQ and CQ ring.  Each stream keeps one
 * operation in flight and starts the next as it completes; every message
 * and frame received, written or read is compared byte by byte.
 *
 * Prints "busy_all: live: TYPE..." and "busy_all: ready N" (N object
 * types) once every type took part in a completed, verified operation,
 * then keeps going:
 *   - SIGTERM: everything destroyed in order, each destroy checked;
 *     exit 0 when all succeeded;
 *   - the device goes away (IBV_EVENT_DEVICE_FATAL, or a verb or a
 *     completion failing while the device no longer answers a query):
 *     everything destroyed that can be (errors ignored), the device
 *     closed, "busy_all: device gone, cleaned up", exit 0.
 * A failure with the device still there (bad data, an error completion,
 * a failed post or destroy) prints "busy_all: FAIL ..." and exits 1, as
 * does a stream with no progress for a minute.
 */
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/tm_types.h>

#include "vm_lib.h"

#define BUFSZ		65536
#define SLOT		256
#define NRECV		4
#define PAYLOAD		64
#define FRAME_HDR	14
#define STALL_S		60
#define GONE_WAIT_MS	30000

/* The streams: the top byte of a wr_id. */
enum { S_RC, S_UC, S_UD, S_XRC, S_TM, S_RAW, S_RSS, S_BIND, NSTREAM };
static const char *const sname[NSTREAM] = {
	"rc", "uc", "ud", "xrc", "tm", "raw", "rss", "bind",
};

/* What a wr_id is for: the next byte. */
enum { K_SEND, K_RECV, K_OP };

/* The object types, in the order "live:" prints them. */
enum {
	T_PD, T_MR, T_MW1, T_MW2, T_CQ, T_CQEX, T_RC, T_UC, T_UD, T_AH,
	T_XRCD, T_XSRQ, T_INI, T_TGT, T_SRQ, T_TMSRQ, T_WQ, T_IND, T_RSS,
	T_RAW, T_FLOW, NTYPE
};
static const char *const tname[NTYPE] = {
	"PD", "MR", "MW-type1", "MW-type2", "CQ", "CQ_EX+channel", "RC-QP",
	"UC-QP", "UD-QP", "AH", "XRCD", "XRC-SRQ", "XRC-INI-QP", "XRC-TGT-QP",
	"SRQ", "TM-SRQ", "WQ", "RWQ-IND-TABLE", "RSS-QP", "RAW-QP", "FLOW",
};
static bool live[NTYPE];

/*
 * Buffer layout (one MR): per stream a send slot and NRECV receive slots;
 * the type 1 window's range (read source), the type 2 window's (write
 * target), the READ destination and the TM tagged buffer.
 */
#define OFF_SEND(s)	((size_t)(s) * SLOT)
#define OFF_RECV(s, i)	(8192 + ((size_t)(s) * NRECV + (i)) * SLOT)
#define OFF_MW1		32768
#define OFF_MW2		36864
#define OFF_RDST	40960
#define OFF_TAG		45056
#define OFF_DECOY	49152
#define MW_LEN		4096

static const uint8_t mac_raw[6] = { 0x02, 0x5c, 0xa0, 0x00, 0x00, 0x01 };
static const uint8_t mac_rss[6] = { 0x02, 0x5c, 0xa0, 0x00, 0x00, 0x02 };
static const uint8_t mac_src[6] = { 0x02, 0x5c, 0xa0, 0x00, 0x00, 0x03 };
static const uint8_t rss_key[40] = { 0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb,
	0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e,
	0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
	0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a };

struct stream {
	uint64_t seq;		/* of the operation in flight */
	bool sq_busy;		/* its send completion not yet seen */
	bool rx_busy;		/* its receive (or match) not yet seen */
	int step;		/* rc: SEND, WRITE, READ; tm: ADD, SEND */
	unsigned long done;	/* operations completed and verified */
	time_t last;		/* of the last progress */
};

static struct {
	const char *dev_name;
	struct env e;		/* ctx, pd, mr, buf, ch, gid, gid_index */
	struct ibv_cq *scq;
	struct ibv_cq_ex *xcq, *tmcq;
	struct ibv_mw *mw1, *mw2;
	struct ibv_qp *rc_a, *rc_b, *uc_a, *uc_b, *ud_tx, *ud_rx;
	struct ibv_ah *ah;
	struct ibv_srq *srq, *xsrq, *tmsrq;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *ini, *tgt, *tm_tx, *tm_rx;
	struct ibv_qp *raw_tx, *raw_rx, *rss;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *ind;
	struct ibv_flow *flow_raw, *flow_rss;
	uint32_t xsrqn, mw1_rkey, mw2_rkey;
	uint64_t decoy_handle;
	unsigned int unexpected;
	struct stream st[NSTREAM];
	bool fatal, cq_event;
} g;

static volatile sig_atomic_t stop;

/* Seconds since @t0 (CLOCK_MONOTONIC), for the log. */
static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static struct timespec t_start;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t wrid(int s, int kind, uint64_t n)
{
	return (uint64_t)s << 56 | (uint64_t)kind << 48 | (n & 0xffffffffffffull);
}

static uint8_t pat(int s, uint64_t seq, size_t k)
{
	return (uint8_t)(seq * 7 + k * 13 + (uint64_t)s * 31 + 1);
}

static void fill(uint8_t *p, int s, uint64_t seq, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		p[k] = pat(s, seq, k);
}

static bool same(const uint8_t *p, int s, uint64_t seq, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (p[k] != pat(s, seq, k))
			return false;
	return true;
}

/* ---- the device going away ------------------------------------------- */

/* Read the async events there are (the fd is non-blocking). */
static void async_drain(void)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(g.e.ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			g.fatal = true;
		else
			printf("busy_all: async event %s\n",
			       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

/* Does the device no longer answer? */
static bool dev_gone(void)
{
	struct ibv_port_attr pa;

	async_drain();
	return g.fatal || ibv_query_port(g.e.ctx, 1, &pa);
}

/*
 * Something failed (@what): is the device going away?  Waits up to
 * GONE_WAIT_MS for DEVICE_FATAL or a failing query (a flush completion
 * can come before the event); false: a real failure.
 */
static bool failure_means_gone(const char *what)
{
	struct pollfd p = { .fd = g.e.ctx->async_fd, .events = POLLIN };
	int waited = 0;

	while (!dev_gone()) {
		if (waited >= GONE_WAIT_MS) {
			printf("busy_all: FAIL %s (errno %d), the device still there\n",
			       what, errno);
			return false;
		}
		poll(&p, 1, 100);
		waited += 100;
	}
	printf("busy_all: %s: the device is going away\n", what);
	return true;
}

/* ---- setup ------------------------------------------------------------ */

static void die_setup(const char *what)
{
	printf("busy_all: FAIL setup: %s (errno %d)\n", what, errno);
	exit(1);
}

/* INIT -> RTR (-> RTS unless @qp is an XRC TGT) towards @dqpn. */
static int qp_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_ah_attr ah;

	gid_ah(&ah, g.e.gid.raw, g.e.gid_index, 64);
	if (qp_rtr(qp, &ah, dqpn, 0, 1, 1))
		return -1;
	if (qp->qp_type == IBV_QPT_XRC_RECV)
		return 0;
	return qp_rts(qp, 0, 14, 7, 7, 1);
}

/* RESET -> INIT of an RC, UC, XRC INI or TGT QP. */
static int qp_to_init(struct ibv_qp *qp)
{
	return qp_init(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

/* A connected pair of @type (RC or UC); @b receives from @srq if set. */
static int conn_pair(enum ibv_qp_type type, struct ibv_srq *srq,
		     struct ibv_qp **a, struct ibv_qp **b)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = g.scq, .recv_cq = ibv_cq_ex_to_cq(g.xcq),
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	*a = ibv_create_qp(g.e.pd, &ia);
	ia.srq = srq;
	if (srq)
		ia.recv_cq = ibv_cq_ex_to_cq(g.tmcq);
	*b = ibv_create_qp(g.e.pd, &ia);
	if (!*a || !*b || qp_to_init(*a) || qp_to_init(*b))
		return -1;
	return qp_connect(*a, (*b)->qp_num) || qp_connect(*b, (*a)->qp_num);
}

/* A raw packet QP in RTS, receiving on the extended CQ. */
static struct ibv_qp *raw_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = g.scq, .recv_cq = ibv_cq_ex_to_cq(g.xcq),
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(g.e.pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? NULL : qp;
}

static struct ibv_sge sge_at(size_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)g.e.buf + off, len, g.e.mr->lkey };

	return s;
}

/* Post receive slot @i of stream @s to its QP, SRQ or WQ. */
static int post_slot(int s, int i)
{
	struct ibv_sge sge = sge_at(OFF_RECV(s, i), SLOT);
	struct ibv_recv_wr wr = { .wr_id = wrid(s, K_RECV, (uint64_t)i),
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(g.e.buf + OFF_RECV(s, i), 0, SLOT);
	switch (s) {
	case S_RC: return ibv_post_recv(g.rc_b, &wr, &bad);
	case S_UC: return ibv_post_recv(g.uc_b, &wr, &bad);
	case S_UD: return ibv_post_srq_recv(g.srq, &wr, &bad);
	case S_XRC: return ibv_post_srq_recv(g.xsrq, &wr, &bad);
	case S_TM: return ibv_post_srq_recv(g.tmsrq, &wr, &bad);
	case S_RAW: return ibv_post_recv(g.raw_rx, &wr, &bad);
	case S_RSS: return ibv_post_wq_recv(g.wq, &wr, &bad);
	}
	return -1;
}

/* A TM operation on the TM SRQ; its handle (an ADD's) into @handle. */
static int tm_op(enum ibv_ops_wr_opcode op, uint64_t wr_id, uint64_t tag,
		 size_t off, uint64_t *handle)
{
	struct ibv_sge sge = sge_at(off, SLOT);
	struct ibv_ops_wr wr = {
		.wr_id = wr_id, .opcode = op,
		.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC,
		.tm = { .unexpected_cnt = g.unexpected,
			.add = { .recv_wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1, .tag = tag, .mask = ~0ull } },
	}, *bad;
	int ret;

	ret = ibv_post_srq_ops(g.tmsrq, &wr, &bad);
	if (!ret && handle)
		*handle = wr.tm.handle;
	return ret;
}

static void build(void)
{
	struct ibv_device *dev = find_dev(g.dev_name);
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NRECV, .max_sge = 1 },
	};
	struct ibv_qp_init_attr_ex qa = {};
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = NRECV, .max_sge = 1,
	};
	struct ibv_wq_attr wm = { .attr_mask = IBV_WQ_ATTR_STATE,
				  .wq_state = IBV_WQS_RDY };
	struct ibv_rwq_ind_table_init_attr ta = {};
	struct ibv_mw_bind mb = {};
	int s, i;

	g.e.ctx = dev ? ibv_open_device(dev) : NULL;
	if (!g.e.ctx || ibv_query_gid(g.e.ctx, 1, g.e.gid_index, &g.e.gid))
		die_setup("open the device, its GID");
	if (fcntl(g.e.ctx->async_fd, F_SETFL, O_NONBLOCK))
		die_setup("async fd non-blocking");
	g.e.pd = ibv_alloc_pd(g.e.ctx);
	g.e.buf = aligned_alloc(4096, BUFSZ);
	if (!g.e.pd || !g.e.buf)
		die_setup("PD");
	memset(g.e.buf, 0, BUFSZ);
	g.e.mr = ibv_reg_mr(g.e.pd, g.e.buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_MW_BIND);
	g.e.ch = ibv_create_comp_channel(g.e.ctx);
	if (!g.e.mr || !g.e.ch ||
	    fcntl(g.e.ch->fd, F_SETFL, O_NONBLOCK))
		die_setup("MR, completion channel");

	g.scq = ibv_create_cq(g.e.ctx, 256, NULL, NULL, 0);
	ca.channel = g.e.ch;
	g.xcq = ibv_create_cq_ex(g.e.ctx, &ca);
	ca.channel = NULL;
	ca.cqe = 64;
	ca.wc_flags |= IBV_WC_EX_WITH_TM_INFO;
	g.tmcq = ibv_create_cq_ex(g.e.ctx, &ca);
	if (!g.scq || !g.xcq || !g.tmcq ||
	    ibv_req_notify_cq(ibv_cq_ex_to_cq(g.xcq), 0))
		die_setup("CQs");

	if (conn_pair(IBV_QPT_RC, NULL, &g.rc_a, &g.rc_b))
		die_setup("RC pair");
	if (conn_pair(IBV_QPT_UC, NULL, &g.uc_a, &g.uc_b))
		die_setup("UC pair");

	{
		struct ibv_srq_init_attr bsa = { .attr = sa.attr };

		g.srq = ibv_create_srq(g.e.pd, &bsa);
	}
	if (!g.srq)
		die_setup("SRQ");
	g.ud_tx = ud_qp(&g.e, g.scq, ibv_cq_ex_to_cq(g.xcq), NULL);
	g.ud_rx = ud_qp(&g.e, g.scq, ibv_cq_ex_to_cq(g.xcq), g.srq);
	g.ah = make_ah(&g.e, &g.e.gid);
	if (!g.ud_tx || !g.ud_rx || !g.ah)
		die_setup("UD QPs, AH");

	g.xrcd = ibv_open_xrcd(g.e.ctx, &xa);
	if (!g.xrcd)
		die_setup("XRCD");
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = g.xrcd;
	sa.cq = ibv_cq_ex_to_cq(g.xcq);
	sa.pd = g.e.pd;
	g.xsrq = ibv_create_srq_ex(g.e.ctx, &sa);
	if (!g.xsrq || ibv_get_srq_num(g.xsrq, &g.xsrqn))
		die_setup("XRC SRQ");
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = g.e.pd;
	qa.send_cq = g.scq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_send_sge = 1;
	g.ini = ibv_create_qp_ex(g.e.ctx, &qa);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = g.xrcd;
	g.tgt = ibv_create_qp_ex(g.e.ctx, &qa);
	if (!g.ini || !g.tgt || qp_to_init(g.ini) || qp_to_init(g.tgt) ||
	    qp_connect(g.tgt, g.ini->qp_num) || qp_connect(g.ini, g.tgt->qp_num))
		die_setup("XRC INI and TGT QPs");

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = NRECV;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	sa.srq_type = IBV_SRQT_TM;
	sa.pd = g.e.pd;
	sa.cq = ibv_cq_ex_to_cq(g.tmcq);
	sa.tm_cap.max_num_tags = 4;
	sa.tm_cap.max_ops = 4;
	g.tmsrq = ibv_create_srq_ex(g.e.ctx, &sa);
	if (!g.tmsrq || conn_pair(IBV_QPT_RC, g.tmsrq, &g.tm_tx, &g.tm_rx))
		die_setup("TM SRQ and its RC QPs");

	g.raw_tx = raw_qp();
	g.raw_rx = raw_qp();
	if (!g.raw_tx || !g.raw_rx)
		die_setup("raw QPs");
	g.flow_raw = mac_flow(g.raw_rx, mac_raw);
	if (!g.flow_raw)
		die_setup("flow rule to the raw QP");
	wa.pd = g.e.pd;
	wa.cq = ibv_cq_ex_to_cq(g.xcq);
	g.wq = ibv_create_wq(g.e.ctx, &wa);
	if (!g.wq || ibv_modify_wq(g.wq, &wm))
		die_setup("WQ");
	ta.ind_tbl = &g.wq;
	g.ind = ibv_create_rwq_ind_table(g.e.ctx, &ta);
	if (!g.ind)
		die_setup("RWQ indirection table");
	g.rss = rss_qp(g.e.ctx, g.e.pd, g.ind, rss_key, 0);
	if (!g.rss)
		die_setup("RSS QP");
	g.flow_rss = mac_flow(g.rss, mac_rss);
	if (!g.flow_rss)
		die_setup("flow rule to the RSS QP");

	/* receives everywhere, the windows, the decoy tag */
	for (s = S_RC; s <= S_RSS; s++)
		for (i = 0; i < NRECV; i++)
			if (post_slot(s, i))
				die_setup(sname[s]);
	g.mw1 = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_1);
	g.mw2 = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_2);
	if (!g.mw1 || !g.mw2)
		die_setup("windows");
	fill(g.e.buf + OFF_MW1, S_BIND, 0, MW_LEN);
	mb.wr_id = wrid(S_BIND, K_OP, 1);
	mb.send_flags = IBV_SEND_SIGNALED;
	mb.bind_info.mr = g.e.mr;
	mb.bind_info.addr = (uintptr_t)g.e.buf + OFF_MW1;
	mb.bind_info.length = MW_LEN;
	mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	if (ibv_bind_mw(g.rc_b, g.mw1, &mb))
		die_setup("bind the type 1 window");
	g.mw1_rkey = g.mw1->rkey;
	{
		struct ibv_send_wr wr = {
			.wr_id = wrid(S_BIND, K_OP, 2),
			.opcode = IBV_WR_BIND_MW,
			.send_flags = IBV_SEND_SIGNALED,
			.bind_mw = {
				.mw = g.mw2,
				.rkey = ibv_inc_rkey(g.mw2->rkey),
				.bind_info = {
					.mr = g.e.mr,
					.addr = (uintptr_t)g.e.buf + OFF_MW2,
					.length = MW_LEN,
					.mw_access_flags =
						IBV_ACCESS_REMOTE_WRITE,
				},
			},
		}, *bad;

		g.mw2_rkey = wr.bind_mw.rkey;
		if (ibv_post_send(g.rc_b, &wr, &bad))
			die_setup("bind the type 2 window");
	}
	g.st[S_BIND].sq_busy = true;
	g.st[S_BIND].step = 2;		/* binds outstanding */
	if (tm_op(IBV_WR_TAG_ADD, wrid(S_TM, K_OP, 0), 0xdec0dec0dec0ull,
		  OFF_DECOY, &g.decoy_handle))
		die_setup("decoy tag");
	g.st[S_TM].sq_busy = true;	/* the decoy's ADD completes first */
	g.st[S_TM].step = -1;
	for (s = 0; s < NSTREAM; s++)
		g.st[s].last = time(NULL);
}

/* ---- traffic ------------------------------------------------------------ */

/* Build a frame to @mac carrying stream @s's payload in send slot @s. */
static uint32_t frame(int s, const uint8_t *mac, uint64_t seq)
{
	uint8_t *f = g.e.buf + OFF_SEND(s);

	memcpy(f, mac, 6);
	memcpy(f + 6, mac_src, 6);
	f[12] = 0x88;			/* local experimental EtherType */
	f[13] = 0xb5;
	fill(f + FRAME_HDR, s, seq, PAYLOAD);
	return FRAME_HDR + PAYLOAD;
}

/* Start stream @s's next operation; 0 or an errno. */
static int start(int s)
{
	struct stream *t = &g.st[s];
	struct ibv_sge sge = sge_at(OFF_SEND(s), PAYLOAD);
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp *qp = NULL;

	t->seq++;
	wr.wr_id = wrid(s, K_SEND, t->seq);
	fill(g.e.buf + OFF_SEND(s), s, t->seq, PAYLOAD);
	t->rx_busy = true;
	switch (s) {
	case S_RC:
		qp = g.rc_a;
		t->step = (t->step + 1) % 3;
		if (t->step == 1) {		/* WRITE through the type 2 MW */
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = (uintptr_t)g.e.buf + OFF_MW2;
			wr.wr.rdma.rkey = g.mw2_rkey;
			memset(g.e.buf + OFF_MW2, 0, PAYLOAD);
			t->rx_busy = false;
		} else if (t->step == 2) {	/* READ through the type 1 MW */
			wr.opcode = IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = (uintptr_t)g.e.buf + OFF_MW1 +
						 (t->seq % 16) * 64;
			wr.wr.rdma.rkey = g.mw1_rkey;
			sge = sge_at(OFF_RDST, PAYLOAD);
			memset(g.e.buf + OFF_RDST, 0, PAYLOAD);
			t->rx_busy = false;
		}
		break;
	case S_UC:
		qp = g.uc_a;
		break;
	case S_UD:
		qp = g.ud_tx;
		wr.wr.ud.ah = g.ah;
		wr.wr.ud.remote_qpn = g.ud_rx->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		break;
	case S_XRC:
		qp = g.ini;
		wr.qp_type.xrc.remote_srqn = g.xsrqn;
		break;
	case S_TM:
		if (t->step == 0) {	/* ADD the tag; the SEND follows */
			memset(g.e.buf + OFF_TAG, 0, SLOT);
			t->rx_busy = false;
			t->sq_busy = true;
			return tm_op(IBV_WR_TAG_ADD, wrid(S_TM, K_OP, t->seq),
				     t->seq, OFF_TAG, NULL);
		}
		{
			struct ibv_tmh h = {
				.opcode = IBV_TMH_EAGER,
				.app_ctx = htobe32((uint32_t)t->seq),
				.tag = htobe64(t->seq - 1),
			};
			uint8_t *p = g.e.buf + OFF_SEND(s);

			/* the ADD's seq is the tag; this SEND's is seq */
			fill(p + sizeof(h), s, t->seq, PAYLOAD);
			memcpy(p, &h, sizeof(h));
			sge.length = sizeof(h) + PAYLOAD;
		}
		qp = g.tm_tx;
		break;
	case S_RAW:
	case S_RSS:
		qp = g.raw_tx;
		sge.length = frame(s, s == S_RAW ? mac_raw : mac_rss, t->seq);
		break;
	}
	t->sq_busy = true;
	return ibv_post_send(qp, &wr, &bad);
}

struct wcx {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	unsigned int flags;
	uint64_t tag;
};

static bool bad_data;

static void progress(int s)
{
	g.st[s].done++;
	g.st[s].last = time(NULL);
}

/* A receive of stream @s completed into slot @i; repost it. */
static int on_recv(int s, int i, const struct wcx *w)
{
	struct stream *t = &g.st[s];
	const uint8_t *p = g.e.buf + OFF_RECV(s, i);
	uint32_t want = PAYLOAD;

	if (s == S_UD)
		p += 40, want += 40;
	else if (s == S_RAW || s == S_RSS)
		p += FRAME_HDR, want += FRAME_HDR;
	else if (s == S_TM)
		p += sizeof(struct ibv_tmh), want += sizeof(struct ibv_tmh);
	if (w->byte_len != want || !same(p, s, t->seq, PAYLOAD)) {
		printf("busy_all: FAIL %s: message %llu: %u bytes, want %u, or wrong data\n",
		       sname[s], (unsigned long long)t->seq, w->byte_len, want);
		bad_data = true;
	}
	if (s == S_TM) {
		/* unexpected: its tag stays added, the phase moves on */
		g.unexpected++;
		printf("busy_all: tm: message %llu arrived unexpected\n",
		       (unsigned long long)t->seq);
	}
	t->rx_busy = false;
	switch (s) {
	case S_RC:
		live[T_RC] = true;
		break;
	case S_UC:
		live[T_UC] = true;
		break;
	case S_UD:
		live[T_UD] = live[T_AH] = live[T_SRQ] = true;
		break;
	case S_XRC:
		live[T_XRCD] = live[T_XSRQ] = live[T_INI] = live[T_TGT] = true;
		break;
	case S_RAW:
		live[T_RAW] = live[T_FLOW] = true;
		break;
	case S_RSS:
		live[T_WQ] = live[T_IND] = live[T_RSS] = true;
		break;
	}
	live[T_PD] = live[T_MR] = true;
	return post_slot(s, i);
}

/* A completion of the send side or of a TM operation. */
static void on_send(int s, int kind, const struct wcx *w)
{
	struct stream *t = &g.st[s];

	t->sq_busy = false;
	if (s == S_BIND) {
		if (--t->step == 0)
			progress(s);
		return;
	}
	if (s == S_RC && t->step == 1) {
		if (!same(g.e.buf + OFF_MW2, s, t->seq, PAYLOAD)) {
			printf("busy_all: FAIL rc: WRITE %llu through the type 2 window: wrong data\n",
			       (unsigned long long)t->seq);
			bad_data = true;
		}
		live[T_MW2] = true;
	} else if (s == S_RC && t->step == 2) {
		if (memcmp(g.e.buf + OFF_RDST,
			   g.e.buf + OFF_MW1 + (t->seq % 16) * 64, PAYLOAD)) {
			printf("busy_all: FAIL rc: READ %llu through the type 1 window: wrong data\n",
			       (unsigned long long)t->seq);
			bad_data = true;
		}
		live[T_MW1] = true;
	}
	if (s == S_TM && kind == K_OP) {
		if (w->opcode != IBV_WC_TM_ADD)
			printf("busy_all: tm: op completion opcode %d\n", w->opcode);
		/* the tag is in: send to it (after the decoy's: add one) */
		t->step = (w->wr_id & 0xffffffffffffull) ? 1 : 0;
		return;
	}
	if (s == S_TM)
		t->step = 0;
}

/* Stream @s of the completion @w; 0, or -1 when it failed. */
static int on_wc(const struct wcx *w, bool ex_cq)
{
	int s = (int)(w->wr_id >> 56), kind = (int)(w->wr_id >> 48) & 0xff;

	if (s >= NSTREAM) {
		printf("busy_all: FAIL completion with wr_id %#llx\n",
		       (unsigned long long)w->wr_id);
		return -1;
	}
	if (w->status != IBV_WC_SUCCESS) {
		printf("busy_all: %s: completion status %s (wr_id %#llx)\n",
		       sname[s], ibv_wc_status_str(w->status),
		       (unsigned long long)w->wr_id);
		return -1;
	}
	live[ex_cq ? T_CQEX : T_CQ] |= !ex_cq || g.cq_event;
	if (s == S_TM && kind == K_OP && w->opcode == IBV_WC_TM_RECV) {
		/* the message matched the tag just added */
		if (!(w->flags & IBV_WC_TM_DATA_VALID))
			return 0;	/* the data follows */
		if (w->byte_len != PAYLOAD ||
		    w->tag != g.st[s].seq - 1 ||
		    !same(g.e.buf + OFF_TAG, s, g.st[s].seq, PAYLOAD)) {
			printf("busy_all: FAIL tm: message %llu: %u bytes, tag %#llx, or wrong data\n",
			       (unsigned long long)g.st[s].seq, w->byte_len,
			       (unsigned long long)w->tag);
			bad_data = true;
		}
		g.st[s].rx_busy = false;
		live[T_TMSRQ] = true;
		return 0;
	}
	if (kind == K_RECV)
		return on_recv(s, (int)(w->wr_id & 0xff), w);
	on_send(s, kind, w);
	return 0;
}

static int poll_plain(struct ibv_cq *cq, int *n)
{
	struct ibv_wc wc[16];
	int r, i;

	r = ibv_poll_cq(cq, 16, wc);
	if (r < 0)
		return -1;
	for (i = 0; i < r; i++) {
		struct wcx w = { .wr_id = wc[i].wr_id, .status = wc[i].status,
				 .opcode = wc[i].opcode,
				 .byte_len = wc[i].byte_len };

		(*n)++;
		if (on_wc(&w, false))
			return -1;
	}
	return 0;
}

static int poll_ex(struct ibv_cq_ex *cq, bool tm, int *n)
{
	struct ibv_poll_cq_attr pa = {};
	int r, ret = 0;

	r = ibv_start_poll(cq, &pa);
	if (r == ENOENT)
		return 0;
	if (r)
		return -1;
	do {
		struct wcx w = { .wr_id = cq->wr_id, .status = cq->status };

		if (w.status == IBV_WC_SUCCESS) {
			w.opcode = ibv_wc_read_opcode(cq);
			w.byte_len = ibv_wc_read_byte_len(cq);
			w.flags = ibv_wc_read_wc_flags(cq);
		}
		if (tm && (w.flags & IBV_WC_TM_MATCH)) {
			struct ibv_wc_tm_info ti = {};

			ibv_wc_read_tm_info(cq, &ti);
			w.tag = ti.tag;
		}
		(*n)++;
		if (on_wc(&w, !tm)) {
			ret = -1;
			break;
		}
		r = ibv_next_poll(cq);
	} while (!r);
	ibv_end_poll(cq);
	if (!ret && r != ENOENT)
		ret = -1;
	return ret;
}

/* Take the completion events there are and arm the CQ again. */
static int cq_events(void)
{
	struct ibv_cq *cq;
	void *ctx;

	while (!ibv_get_cq_event(g.e.ch, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		g.cq_event = true;
		if (ibv_req_notify_cq(cq, 0))
			return -1;
	}
	return 0;
}

static bool all_live(void)
{
	int i;

	for (i = 0; i < NTYPE; i++)
		if (!live[i])
			return false;
	return true;
}

/*
 * Run until SIGTERM (0), the device gone (1) or a failure (-1).
 */
static int run(void)
{
	struct pollfd p[2] = {
		{ .fd = g.e.ctx->async_fd, .events = POLLIN },
		{ .fd = g.e.ch->fd, .events = POLLIN },
	};
	bool ready = false;
	int s;

	while (!stop) {
		int n = 0;
		time_t now = time(NULL);

		if (poll_plain(g.scq, &n) || poll_ex(g.xcq, false, &n) ||
		    poll_ex(g.tmcq, true, &n))
			return failure_means_gone("a completion") ? 1 : -1;
		if (bad_data)
			return -1;
		for (s = 0; s < S_BIND; s++) {
			struct stream *t = &g.st[s];

			if (s == S_RC && g.st[S_BIND].step)
				continue;	/* the windows are not bound yet */
			if (t->sq_busy || t->rx_busy) {
				if (now - t->last > STALL_S) {
					printf("busy_all: %s: no progress for %d s\n",
					       sname[s], STALL_S);
					return failure_means_gone("a stalled stream") ?
					       1 : -1;
				}
				continue;
			}
			if (t->seq && !(s == S_TM && t->step == 1))
				progress(s);
			else if (s == S_TM)
				t->last = now;
			if (start(s))
				return failure_means_gone(sname[s]) ? 1 : -1;
		}
		if (!ready && all_live()) {
			ready = true;
			printf("busy_all: live:");
			for (s = 0; s < NTYPE; s++)
				printf(" %s", tname[s]);
			printf("\nbusy_all: ready %d\n", NTYPE);
			printf("busy_all: (ready %.1f s after start)\n",
			       since(&t_start));
			fflush(stdout);
		}
		/* light traffic: at most one round of restarts a poll */
		poll(p, 2, n ? 1 : 5);
		async_drain();
		if (g.fatal) {
			printf("busy_all: IBV_EVENT_DEVICE_FATAL\n");
			return 1;
		}
		if (cq_events())
			return failure_means_gone("re-arming the CQ") ? 1 : -1;
	}
	return 0;
}

/* ---- teardown ----------------------------------------------------------- */

static int destroy_failures;

#define DESTROY(fn, obj)                                                       \
	do {                                                                   \
		if ((obj) && fn(obj)) {                                        \
			printf("busy_all: %s(%s) failed (errno %d)\n", #fn,    \
			       #obj, errno);                                   \
			destroy_failures++;                                    \
		}                                                              \
	} while (0)

static void teardown(void)
{
	DESTROY(ibv_destroy_flow, g.flow_raw);
	DESTROY(ibv_destroy_flow, g.flow_rss);
	DESTROY(ibv_destroy_qp, g.rss);
	DESTROY(ibv_destroy_rwq_ind_table, g.ind);
	DESTROY(ibv_destroy_wq, g.wq);
	DESTROY(ibv_destroy_qp, g.raw_tx);
	DESTROY(ibv_destroy_qp, g.raw_rx);
	DESTROY(ibv_destroy_qp, g.rc_a);
	DESTROY(ibv_destroy_qp, g.rc_b);
	DESTROY(ibv_destroy_qp, g.uc_a);
	DESTROY(ibv_destroy_qp, g.uc_b);
	DESTROY(ibv_destroy_qp, g.ud_tx);
	DESTROY(ibv_destroy_qp, g.ud_rx);
	DESTROY(ibv_destroy_qp, g.ini);
	DESTROY(ibv_destroy_qp, g.tgt);
	DESTROY(ibv_destroy_qp, g.tm_tx);
	DESTROY(ibv_destroy_qp, g.tm_rx);
	DESTROY(ibv_destroy_srq, g.tmsrq);
	DESTROY(ibv_destroy_srq, g.xsrq);
	DESTROY(ibv_destroy_srq, g.srq);
	DESTROY(ibv_close_xrcd, g.xrcd);
	DESTROY(ibv_destroy_ah, g.ah);
	DESTROY(ibv_dealloc_mw, g.mw1);
	DESTROY(ibv_dealloc_mw, g.mw2);
	DESTROY(ibv_dereg_mr, g.e.mr);
	DESTROY(ibv_destroy_cq, g.scq);
	if (g.xcq)
		DESTROY(ibv_destroy_cq, ibv_cq_ex_to_cq(g.xcq));
	if (g.tmcq)
		DESTROY(ibv_destroy_cq, ibv_cq_ex_to_cq(g.tmcq));
	DESTROY(ibv_destroy_comp_channel, g.e.ch);
	DESTROY(ibv_dealloc_pd, g.e.pd);
	DESTROY(ibv_close_device, g.e.ctx);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	int ret, s;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "moves-data"))) {
		fprintf(stderr, "usage: busy_all DEV GIDX [moves-data]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	g.dev_name = argv[1];
	g.e.gid_index = atoi(argv[2]);
	if (argc == 4) {
		ret = env_moves_data(g.dev_name, g.e.gid_index);
		printf("busy_all: %s %s data\n", g.dev_name,
		       ret ? "moves" : "does not move");
		return ret ? 0 : 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	build();
	printf("busy_all: set up in %.1f s\n", since(&t_start));
	ret = run();
	for (s = 0; s < S_BIND; s++)
		printf("busy_all: %s: %lu operations\n", sname[s], g.st[s].done);
	teardown();
	if (ret > 0) {
		printf("busy_all: device gone, cleaned up (%d destroys failed)\n",
		       destroy_failures);
		return 0;
	}
	if (ret < 0)
		return 1;
	printf("busy_all: SIGTERM: torn down, %d destroys failed\n",
	       destroy_failures);
	return destroy_failures ? 1 : 0;
}
