// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vm_events: completion vectors, CQ moderation and multicast rules on a
 * live device.  Runs in the VM (see vm_events.sh beside it):
 *
 *   vm_events DEV GID_INDEX
 *   vm_events DEV GID_INDEX mcast-recv|mcast-send GROUP COUNT
 *
 * GROUP is an IPv4 or IPv6 multicast address.
 *
 * UD QPs on DEV talk to each other through the device's own GID.  No
 * wall-clock assertion: "no event yet" is checked after the completions
 * have provably arrived, and "an event comes" waits generously.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_lib.h"

/* Is a completion event pending on the channel within @ms? */
static bool event_within(struct env *e, int ms)
{
	return cq_event_within(e, ms) == e->rcq;
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

/* Moderation @count/@period on the receive CQ, and the CQ armed. */
static void mod_armed(struct env *e, uint16_t count, uint16_t period)
{
	CHECK(set_mod(e->rcq, count, period) == 0);
	CHECK(ibv_req_notify_cq(e->rcq, 0) == 0);
}

/* One datagram to ourselves: its event comes, its completion is reaped. */
static void one_event(struct env *e)
{
	CHECK(send_n(e, e->ah, e->rx->qp_num, 1) == 0);
	CHECK(event_within(e, EVENT_WAIT_MS));
	CHECK(reap(e->rcq, 1) == 0);
}

static void test_moderation(struct env *e)
{
	CHECK(set_mod(e->rcq, 1, 4096) == EINVAL);

	/* count only: 3 completions raise nothing, the 4th does */
	mod_armed(e, 4, 0);
	CHECK(send_n(e, e->ah, e->rx->qp_num, 3) == 0);
	CHECK(reap(e->rcq, 3) == 0);
	CHECK(!event_within(e, 2000));
	one_event(e);
	printf("ok - cq_count 4 holds back the event until the 4th CQE\n");

	/* period: a lone completion is reported when cq_period runs out */
	mod_armed(e, 100, 2000);
	one_event(e);
	printf("ok - cq_period reports a lone completion\n");

	/* off again: every armed completion raises the event */
	mod_armed(e, 0, 0);
	one_event(e);
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
