// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Helpers shared by the VM programs; see vm_lib.h. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_lib.h"

/* A UD QP in RTS, receiving from @srq if it is set. */
struct ibv_qp *ud_qp(struct env *e, struct ibv_cq *scq, struct ibv_cq *rcq,
		     struct ibv_srq *srq)
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

/* An AH to @dgid from our GID. */
struct ibv_ah *make_ah(struct env *e, const union ibv_gid *dgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = (uint8_t)e->gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(e->pd, &aa);
}

/* Post @n receives on @qp, into the receive slots in turn. */
int post_recvs(struct env *e, struct ibv_qp *qp, unsigned int n)
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
int reap(struct ibv_cq *cq, int n)
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

/*
 * Post one signaled UD SEND of MSG bytes from send slot @wr_id % NBUF on
 * @qp to @qpn, through @ah.
 */
int post_ud_send(struct env *e, struct ibv_qp *qp, struct ibv_ah *ah,
		 uint32_t qpn, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + (wr_id % NBUF) * MSG,
		.length = MSG, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = QKEY },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/*
 * Send @n UD messages (slot i filled with 0xa0 + i) from e->tx to @qpn
 * via @ah, and wait for the sends.
 */
int send_n(struct env *e, struct ibv_ah *ah, uint32_t qpn, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(e->buf + i * MSG, 0xa0 + i, MSG);
		if (post_ud_send(e, e->tx, ah, qpn, (uint64_t)i))
			return -1;
	}
	return reap(e->scq, n);
}

/* Wait for one completion on @cq into @wc; return its status, or -1. */
int one_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int spins;

	for (spins = 0; spins < 600000; spins++) {
		int r = ibv_poll_cq(cq, 1, wc);

		if (r < 0)
			return -1;
		if (r)
			return wc->status;
		usleep(200);
	}
	return -1;
}

/*
 * The device named @dev_name, or NULL.  The list stays allocated (it is
 * small and the device must outlive it), so that the device can be
 * opened again and again, also in a forked child.
 */
struct ibv_device *find_dev(const char *dev_name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			return list[i];
	if (list)
		ibv_free_device_list(list);
	return NULL;
}

/* Open @dev_name and build the environment: two UD QPs and an AH. */
int setup(struct env *e, const char *dev_name)
{
	struct ibv_device *dev = find_dev(dev_name);

	e->ctx = dev ? ibv_open_device(dev) : NULL;
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

/*
 * The CQ of the completion event pending on @e's channel within @ms
 * (consumed and acknowledged), or NULL if none came.
 */
struct ibv_cq *cq_event_within(struct env *e, int ms)
{
	struct pollfd p = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) <= 0)
		return NULL;
	if (ibv_get_cq_event(e->ch, &cq, &cq_ctx))
		return NULL;
	ibv_ack_cq_events(cq, 1);
	return cq;
}

/* Wait up to EVENT_WAIT_MS for async event @want, skipping others. */
bool async_event_within(struct env *e, enum ibv_event_type want)
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
 * Does @dev_name still move data?  3 UD datagrams to ourselves through a
 * fresh environment (setup()), every byte compared; all of it freed
 * again.  For the programs that first try to break the device.
 */
bool env_moves_data(const char *dev_name, int gid_index)
{
	struct env e = { .gid_index = gid_index };
	bool ok;
	int i, j;

	if (setup(&e, dev_name)) {
		fprintf(stderr, "%s: data check: setup failed (errno %d)\n",
			dev_name, errno);
		return false;
	}
	ok = !send_n(&e, e.ah, e.rx->qp_num, 3) && !reap(e.rcq, 3);
	for (i = 0; ok && i < 3; i++)
		for (j = 0; j < MSG; j++)
			ok = ok && e.buf[NBUF * MSG + (size_t)i * (MSG + 40) + 40 + j] ==
				   (uint8_t)(0xa0 + i);
	ibv_destroy_ah(e.ah);
	ibv_destroy_qp(e.tx);
	ibv_destroy_qp(e.rx);
	ibv_destroy_cq(e.scq);
	ibv_destroy_cq(e.rcq);
	ibv_destroy_comp_channel(e.ch);
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	free(e.buf);
	return ok;
}

/* A rule steering the frames to destination MAC @mac (6 bytes) to @qp. */
struct ibv_flow *mac_flow(struct ibv_qp *qp, const uint8_t *mac)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} fa = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(fa),
			  .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH,
			 .size = sizeof(struct ibv_flow_spec_eth) },
	};

	memcpy(fa.eth.val.dst_mac, mac, 6);
	memset(fa.eth.mask.dst_mac, 0xff, 6);
	return ibv_create_flow(qp, &fa.attr);
}
