// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vm_events: completion vectors, CQ moderation, multicast rules and a
 * hostile SRQ ring on a live device.  Runs in the VM (see
 * tests/vm_events.sh):
 *
 *   vm_events DEV GID_INDEX
 *   vm_events DEV GID_INDEX mcast-recv|mcast-send GROUP COUNT
 *   vm_events DEV GID_INDEX srq-hostile
 *
 * GROUP is an IPv4 or IPv6 multicast address.
 *
 * UD QPs on DEV talk to each other through the device's own GID.  No
 * wall-clock assertion: "no event yet" is checked after the completions
 * have provably arrived, and "an event comes" waits generously.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "shca.h"		/* the provider's SRQ ring, to scribble on */

#define QKEY		0x11111111u
#define MSG		64
#define NBUF		32
#define EVENT_WAIT_MS	120000

static int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s (errno %d)\n",         \
				__FILE__, __LINE__, #cond, errno);             \
			failures++;                                            \
		}                                                              \
	} while (0)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *tx, *rx;
	struct ibv_ah *ah;
	union ibv_gid gid;
	int gid_index;
	unsigned int recv_posted;
};

static struct ibv_qp *ud_qp(struct env *e, struct ibv_cq *scq,
			    struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_UD,
		.srq = srq,
		.cap = { .max_send_wr = NBUF, .max_recv_wr = NBUF,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

static struct ibv_ah *make_ah(struct env *e, const union ibv_gid *dgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = (uint8_t)e->gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(e->pd, &aa);
}

static int post_recvs(struct env *e, struct ibv_qp *qp, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)e->buf + NBUF * MSG +
				(size_t)((e->recv_posted + i) % NBUF) * (MSG + 40),
			.length = MSG + 40, .lkey = e->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = e->recv_posted + i,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(qp, &wr, &bad))
			return -1;
	}
	e->recv_posted += n;
	return 0;
}

/* Poll @cq until @n completions arrived; all must be successful. */
static int reap(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	int got = 0, spins = 0;

	while (got < n && spins < 600000) {
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0)
			return -1;
		if (!r) {
			usleep(200);
			spins++;
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "wc status %s\n",
				ibv_wc_status_str(wc.status));
			return -1;
		}
		got++;
	}
	return got == n ? 0 : -1;
}

/* Send @n UD messages from e->tx to @qpn (via @ah), wait for the sends. */
static int send_n(struct env *e, struct ibv_ah *ah, uint32_t qpn, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)e->buf + i * MSG,
				       .length = MSG, .lkey = e->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = qpn,
				   .remote_qkey = QKEY },
		}, *bad;

		memset(e->buf + i * MSG, 0xa0 + i, MSG);
		if (ibv_post_send(e->tx, &wr, &bad))
			return -1;
	}
	return reap(e->scq, n);
}

/* Is a completion event pending on the channel within @ms? */
static bool event_within(struct env *e, int ms)
{
	struct pollfd p = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) <= 0)
		return false;
	if (ibv_get_cq_event(e->ch, &cq, &cq_ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == e->rcq;
}

static int set_mod(struct ibv_cq *cq, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = {
		.attr_mask = IBV_CQ_ATTR_MODERATE,
		.moderate = { .cq_count = count, .cq_period = period },
	};

	return ibv_modify_cq(cq, &a);
}

static void test_vectors(struct env *e)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct ibv_device_attr_ex ax;
	struct ibv_cq *cq;
	int v;

	CHECK(ibv_query_device_ex(e->ctx, NULL, &ax) == 0);
	CHECK(e->ctx->num_comp_vectors == cpus);
	CHECK(ax.cq_mod_caps.max_cq_count == 65535 &&
	      ax.cq_mod_caps.max_cq_period == 4095);
	for (v = 0; v < e->ctx->num_comp_vectors; v++) {
		cq = ibv_create_cq(e->ctx, 4, NULL, NULL, v);
		CHECK(cq != NULL);
		if (cq)
			ibv_destroy_cq(cq);
	}
	errno = 0;
	cq = ibv_create_cq(e->ctx, 4, NULL, NULL, e->ctx->num_comp_vectors);
	CHECK(!cq && errno == EINVAL);
	if (cq)
		ibv_destroy_cq(cq);
	printf("ok - %d completion vectors\n", e->ctx->num_comp_vectors);
}

static void test_moderation(struct env *e)
{
	uint32_t qpn = e->rx->qp_num;

	CHECK(set_mod(e->rcq, 1, 4096) == EINVAL);

	/* count only: 3 completions raise nothing, the 4th does */
	CHECK(set_mod(e->rcq, 4, 0) == 0);
	CHECK(ibv_req_notify_cq(e->rcq, 0) == 0);
	CHECK(send_n(e, e->ah, qpn, 3) == 0);
	CHECK(reap(e->rcq, 3) == 0);
	CHECK(!event_within(e, 2000));
	CHECK(send_n(e, e->ah, qpn, 1) == 0);
	CHECK(event_within(e, EVENT_WAIT_MS));
	CHECK(reap(e->rcq, 1) == 0);
	printf("ok - cq_count 4 holds back the event until the 4th CQE\n");

	/* period: a lone completion is reported when cq_period runs out */
	CHECK(set_mod(e->rcq, 100, 2000) == 0);
	CHECK(ibv_req_notify_cq(e->rcq, 0) == 0);
	CHECK(send_n(e, e->ah, qpn, 1) == 0);
	CHECK(event_within(e, EVENT_WAIT_MS));
	CHECK(reap(e->rcq, 1) == 0);
	printf("ok - cq_period reports a lone completion\n");

	/* off again: every armed completion raises the event */
	CHECK(set_mod(e->rcq, 0, 0) == 0);
	CHECK(ibv_req_notify_cq(e->rcq, 0) == 0);
	CHECK(send_n(e, e->ah, qpn, 1) == 0);
	CHECK(event_within(e, EVENT_WAIT_MS));
	CHECK(reap(e->rcq, 1) == 0);
	CHECK(post_recvs(e, e->rx, 6) == 0);
	printf("ok - moderation off\n");
}

static void mgid_v4(union ibv_gid *g, uint8_t a, uint8_t b, uint8_t c,
		    uint8_t d)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = 0xff;
	g->raw[11] = 0xff;
	g->raw[12] = a;
	g->raw[13] = b;
	g->raw[14] = c;
	g->raw[15] = d;
}

/* ibv_attach_mcast/ibv_detach_mcast rules, and EBUSY on destroy. */
static void test_mcast_rules(struct env *e)
{
	union ibv_gid g1, g2, uni, v6 = { .raw = { 0xff, 0x0e, [15] = 7 } };
	struct ibv_qp_init_attr ia = {
		.send_cq = e->scq, .recv_cq = e->scq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device_attr da;
	struct ibv_qp *ud, *rc;

	CHECK(ibv_query_device(e->ctx, &da) == 0);
	CHECK(da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach);
	mgid_v4(&g1, 239, 1, 2, 4);
	mgid_v4(&g2, 239, 1, 2, 5);
	mgid_v4(&uni, 10, 77, 0, 9);
	ud = ud_qp(e, e->scq, e->scq, NULL);
	rc = ibv_create_qp(e->pd, &ia);
	CHECK(ud && rc);
	if (!ud || !rc)
		return;
	CHECK(ibv_attach_mcast(rc, &g1, 0) == EINVAL);
	CHECK(ibv_attach_mcast(ud, &uni, 0) == EINVAL);
	CHECK(ibv_detach_mcast(ud, &g1, 0) == EINVAL);
	CHECK(ibv_attach_mcast(ud, &g1, 0) == 0);
	CHECK(ibv_attach_mcast(ud, &g1, 0) == 0);	/* idempotent */
	CHECK(ibv_attach_mcast(ud, &g2, 0) == 0);
	CHECK(ibv_attach_mcast(ud, &v6, 0) == 0);
	CHECK(ibv_destroy_qp(ud) == EBUSY);
	CHECK(ibv_detach_mcast(ud, &g1, 0) == 0);
	CHECK(ibv_detach_mcast(ud, &g1, 0) == EINVAL);
	CHECK(ibv_destroy_qp(ud) == EBUSY);
	CHECK(ibv_detach_mcast(ud, &g2, 0) == 0);
	CHECK(ibv_destroy_qp(ud) == EBUSY);
	CHECK(ibv_detach_mcast(ud, &v6, 0) == 0);
	CHECK(ibv_destroy_qp(ud) == 0);
	CHECK(ibv_destroy_qp(rc) == 0);

	/* a QP left attached at exit is detached by the kernel's cleanup */
	ud = ud_qp(e, e->scq, e->scq, NULL);
	CHECK(ud && ibv_attach_mcast(ud, &g1, 0) == 0);
	printf("ok - multicast attach/detach rules, EBUSY on destroy\n");
}

/* Byte @j of multicast message @i. */
static uint8_t mc_byte(int i, int j)
{
	return (uint8_t)(i * 31 + j + 7);
}

/* Parse "a.b.c.d" into an IPv4-mapped MGID, or an IPv6 address. */
static int mgid_parse(union ibv_gid *g, const char *s)
{
	unsigned int a, b, c, d;

	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, g->raw) == 1 ? 0 : -1;
	if (sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) != 4 ||
	    a > 255 || b > 255 || c > 255 || d > 255)
		return -1;
	mgid_v4(g, (uint8_t)a, (uint8_t)b, (uint8_t)c, (uint8_t)d);
	return 0;
}

/*
 * Two UD QPs attach to the group; each must receive all @n datagrams,
 * byte for byte, with the GRH in front.
 */
static int mcast_recv(struct env *e, const union ibv_gid *mgid, int n)
{
	struct ibv_qp *qp[2] = { ud_qp(e, e->scq, e->rcq, NULL),
				 ud_qp(e, e->scq, e->rcq, NULL) };
	int got[2] = { 0, 0 }, spins = 0, q, i, j;
	struct ibv_wc wc;

	if (!qp[0] || !qp[1] || n > NBUF / 2)
		return -1;
	for (q = 0; q < 2; q++) {
		for (i = 0; i < n; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)e->buf + NBUF * MSG +
					(size_t)(q * n + i) * (MSG + 40),
				.length = MSG + 40, .lkey = e->mr->lkey,
			};
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)(q * n + i),
						  .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			if (ibv_post_recv(qp[q], &wr, &bad))
				return -1;
		}
		CHECK(ibv_attach_mcast(qp[q], mgid, 0) == 0);
	}
	printf("mcast-recv: ready\n");
	fflush(stdout);
	while (got[0] + got[1] < 2 * n && spins < 1500000) {
		uint8_t *p;
		int r = ibv_poll_cq(e->rcq, 1, &wc);

		if (r <= 0) {
			usleep(200);
			spins++;
			continue;
		}
		CHECK(wc.status == IBV_WC_SUCCESS);
		CHECK(wc.byte_len == MSG + 40 && (wc.wc_flags & IBV_WC_GRH));
		q = wc.qp_num == qp[1]->qp_num;
		got[q]++;
		p = e->buf + NBUF * MSG + wc.wr_id * (MSG + 40) + 40;
		i = p[0];		/* the sender's message index */
		for (j = 1; j < MSG; j++)
			if (p[j] != mc_byte(i, j))
				break;
		CHECK(i < n && j == MSG);
	}
	CHECK(got[0] == n && got[1] == n);
	for (q = 0; q < 2; q++)
		CHECK(ibv_detach_mcast(qp[q], mgid, 0) == 0);
	CHECK(ibv_destroy_qp(qp[0]) == 0 && ibv_destroy_qp(qp[1]) == 0);
	printf("%s - multicast: %d + %d datagrams verified on 2 QPs\n",
	       got[0] == n && got[1] == n ? "ok" : "not ok", got[0], got[1]);
	return 0;
}

/* Send @n datagrams to the group: AH to the MGID, DestQP 0xFFFFFF. */
static int mcast_send(struct env *e, const union ibv_gid *mgid, int n)
{
	struct ibv_ah *ah = make_ah(e, mgid);
	int i, j;

	if (!ah || n > NBUF)
		return -1;
	for (i = 0; i < n; i++) {
		uint8_t *p = e->buf + i * MSG;
		struct ibv_sge sge = { .addr = (uintptr_t)p, .length = MSG,
				       .lkey = e->mr->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
				   .remote_qkey = QKEY },
		}, *bad;

		p[0] = (uint8_t)i;
		for (j = 1; j < MSG; j++)
			p[j] = mc_byte(i, j);
		CHECK(ibv_post_send(e->tx, &wr, &bad) == 0);
		CHECK(reap(e->scq, 1) == 0);
	}
	ibv_destroy_ah(ah);
	printf("ok - multicast: %d datagrams sent\n", n);
	return 0;
}

static int setup(struct env *e, const char *dev_name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			e->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e->ctx || ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid))
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->buf = calloc(1, 2 * NBUF * (MSG + 40));
	e->mr = e->pd && e->buf ? ibv_reg_mr(e->pd, e->buf,
					     2 * NBUF * (MSG + 40),
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	e->ch = ibv_create_comp_channel(e->ctx);
	if (!e->mr || !e->ch)
		return -1;
	e->scq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	e->rcq = ibv_create_cq(e->ctx, 64, NULL, e->ch,
			       e->ctx->num_comp_vectors - 1);
	if (!e->scq || !e->rcq)
		return -1;
	e->tx = ud_qp(e, e->scq, e->scq, NULL);
	e->rx = ud_qp(e, e->scq, e->rcq, NULL);
	e->ah = make_ah(e, &e->gid);
	if (!e->tx || !e->rx || !e->ah)
		return -1;
	return post_recvs(e, e->rx, 6);
}

/* ---- hostile SRQ ring -------------------------------------------------- */

/* The receive WQE the provider wrote last into @srq's ring. */
static struct shca_recv_wqe *srq_last_wqe(struct ibv_srq *srq)
{
	struct shca_ring *r = &to_shca_srq(srq)->wq.ring;
	uint32_t idx = (to_shca_srq(srq)->wq.prod - 1) & r->mask;

	return (struct shca_recv_wqe *)(r->entries +
					((size_t)idx << r->entry_shift));
}

static int srq_post_one(struct env *e, struct ibv_srq *srq, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + NBUF * MSG,
			       .length = MSG + 40, .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Wait for one completion on @cq; return its status, or -1. */
static int one_wc(struct ibv_cq *cq, uint64_t *wr_id)
{
	struct ibv_wc wc;
	int spins;

	for (spins = 0; spins < 600000; spins++) {
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0)
			return -1;
		if (r) {
			*wr_id = wc.wr_id;
			return wc.status;
		}
		usleep(200);
	}
	return -1;
}

/* Wait up to EVENT_WAIT_MS for async event @want, skipping others. */
static bool async_event_within(struct env *e, enum ibv_event_type want)
{
	struct pollfd p = { .fd = e->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool got = false;

	while (!got && poll(&p, 1, EVENT_WAIT_MS) > 0) {
		if (ibv_get_async_event(e->ctx, &ev))
			return false;
		got = ev.event_type == want;
		ibv_ack_async_event(&ev);
	}
	return got;
}

/*
 * One receive WQE made hostile after posting (by @spoil) meets a SEND on
 * a fresh UD QP: it must complete with status @want and its own wr_id.
 */
static void srq_bad_wqe(struct env *e, struct ibv_srq *srq, struct ibv_cq *cq,
			void (*spoil)(struct shca_recv_wqe *),
			enum ibv_wc_status want, const char *what)
{
	struct ibv_qp *qp = ud_qp(e, e->scq, cq, srq);
	uint64_t wr_id = 0;
	int st = -1;

	CHECK(qp && srq_post_one(e, srq, 0x5151) == 0);
	if (qp) {
		spoil(srq_last_wqe(srq));
		CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		st = one_wc(cq, &wr_id);
		CHECK(st == (int)want && wr_id == 0x5151);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	printf("%s - SRQ WQE with %s completes with %s\n",
	       st == (int)want && wr_id == 0x5151 ? "ok" : "not ok", what,
	       ibv_wc_status_str(want));
}

static void spoil_lkey(struct shca_recv_wqe *w)
{
	((struct shca_sge *)(w + 1))->lkey ^= 0x00ffff00u;
}

static void spoil_num_sge(struct shca_recv_wqe *w)
{
	w->num_sge = 200;
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
	srq_bad_wqe(e, srq, cq, spoil_lkey, IBV_WC_LOC_PROT_ERR, "a bad lkey");
	srq_bad_wqe(e, srq, cq, spoil_num_sge, IBV_WC_LOC_QP_OP_ERR,
		    "num_sge 200");

	/* a producer index no ring can have: SRQ_ERR, nothing consumed */
	qp = ud_qp(e, e->scq, cq, srq);
	CHECK(qp != NULL);
	if (qp) {
		to_shca_srq(srq)->wq.ring.ctl->prod += 100000;
		CHECK(send_n(e, e->ah, qp->qp_num, 1) == 0);
		ev = async_event_within(e, IBV_EVENT_SRQ_ERR);
		CHECK(ev);
		CHECK(ibv_destroy_qp(qp) == 0);
	}
	CHECK(ibv_destroy_srq(srq) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
	printf("%s - SRQ with a hostile producer index raises SRQ_ERR\n",
	       ev ? "ok" : "not ok");
	/* the device still delivers on a sane QP */
	CHECK(send_n(e, e->ah, e->rx->qp_num, 1) == 0);
	CHECK(reap(e->rcq, 1) == 0);
}

int main(int argc, char **argv)
{
	static struct env e;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX\n", argv[0]);
		return 2;
	}
	e.gid_index = atoi(argv[2]);
	if (setup(&e, argv[1])) {
		perror("setup");
		return 1;
	}
	if (argc == 4 && !strcmp(argv[3], "srq-hostile")) {
		test_srq_hostile(&e);
		return failures ? 1 : 0;
	}
	if (argc == 6) {
		union ibv_gid mgid;

		if (mgid_parse(&mgid, argv[4]))
			return 2;
		if (!strcmp(argv[3], "mcast-recv"))
			mcast_recv(&e, &mgid, atoi(argv[5]));
		else
			mcast_send(&e, &mgid, atoi(argv[5]));
		return failures ? 1 : 0;
	}
	test_vectors(&e);
	test_moderation(&e);
	test_mcast_rules(&e);
	if (failures) {
		printf("not ok - vm_events: %d failure(s)\n", failures);
		return 1;
	}
	printf("ok - vm_events: all passed\n");
	return 0;
}
