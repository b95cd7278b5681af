// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srqcm: RDMA CM with a shared receive queue (rdma_create_srq(3)).
 *
 * The server allocates an SRQ on the connection's rdma_cm_id with the
 * default PD, checks the returned capabilities, posts every receive to it
 * before accepting (rdma_post_recv goes to id->srq), and creates its RC QP
 * on that SRQ.  While the QP exists ibv_destroy_srq must fail with EBUSY.
 * The client sends MSGS messages, each a pattern of its own; the server
 * checks every completion (status, opcode, length, QP) and every byte,
 * and that each message arrived exactly once.
 *
 *   srqcm -s -a ADDR [-p PORT] [-n MSGS]      server
 *   srqcm -c -a ADDR [-p PORT] [-n MSGS]      client
 *
 * Exit status 0 only when everything checked out.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <infiniband/verbs.h>

#define MSG_SIZE	1024
#define MAX_MSGS	1024

struct opts {
	int server;
	const char *addr;
	const char *port;
	unsigned int msgs;
};

static uint8_t pattern(unsigned int msg, unsigned int i)
{
	return i == 0 ? (uint8_t)msg : (uint8_t)(msg * 31 + i * 13);
}

static void fill(uint8_t *buf, unsigned int msg)
{
	unsigned int i;

	for (i = 0; i < MSG_SIZE; i++)
		buf[i] = pattern(msg, i);
	buf[1] = (uint8_t)(msg >> 8);
}

static int check_msg(const uint8_t *buf, unsigned int *msg)
{
	unsigned int i;

	*msg = buf[0] | (unsigned int)buf[1] << 8;
	for (i = 2; i < MSG_SIZE; i++)
		if (buf[i] != pattern(*msg, i))
			return -1;
	return 0;
}

static struct rdma_addrinfo *resolve(const struct opts *o)
{
	struct rdma_addrinfo hints = {}, *res;
	int ret;

	hints.ai_port_space = RDMA_PS_TCP;
	if (o->server)
		hints.ai_flags = RAI_PASSIVE;
	ret = rdma_getaddrinfo(o->addr, o->port, &hints, &res);
	if (ret) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	return res;
}

/* Server side of one connection: SRQ, receives, QP, EBUSY check, accept. */
static int server_setup(struct rdma_cm_id *id, const struct opts *o,
			uint8_t *buf, struct ibv_mr **mr)
{
	struct ibv_srq_init_attr sattr = {};
	struct ibv_qp_init_attr qattr = {};
	unsigned int i;
	int ret;

	sattr.attr.max_wr = o->msgs;
	sattr.attr.max_sge = 1;
	if (rdma_create_srq(id, NULL, &sattr)) {
		perror("rdma_create_srq");
		return -1;
	}
	if (sattr.attr.max_wr < o->msgs || sattr.attr.max_sge < 1) {
		fprintf(stderr, "srq caps %u/%u below %u/1\n",
			sattr.attr.max_wr, sattr.attr.max_sge, o->msgs);
		return -1;
	}
	*mr = rdma_reg_msgs(id, buf, (size_t)o->msgs * MSG_SIZE);
	if (!*mr) {
		perror("rdma_reg_msgs");
		return -1;
	}
	for (i = 0; i < o->msgs; i++) {
		if (rdma_post_recv(id, (void *)(uintptr_t)i,
				   buf + (size_t)i * MSG_SIZE, MSG_SIZE, *mr)) {
			perror("rdma_post_recv");
			return -1;
		}
	}
	qattr.qp_type = IBV_QPT_RC;
	qattr.srq = id->srq;
	qattr.cap.max_send_wr = 1;
	qattr.cap.max_send_sge = 1;
	/* ignored with an SRQ, but sizes the receive CQ librdmacm creates */
	qattr.cap.max_recv_wr = o->msgs;
	qattr.sq_sig_all = 1;
	if (rdma_create_qp(id, NULL, &qattr)) {
		perror("rdma_create_qp");
		return -1;
	}
	ret = ibv_destroy_srq(id->srq);
	if (ret != EBUSY) {
		fprintf(stderr, "destroy_srq with a QP attached: %d, want EBUSY\n",
			ret);
		return -1;
	}
	if (rdma_accept(id, NULL)) {
		perror("rdma_accept");
		return -1;
	}
	return 0;
}

static int server_check_wc(struct rdma_cm_id *id, const struct ibv_wc *wc,
			   const struct opts *o, const uint8_t *buf,
			   uint8_t *seen)
{
	unsigned int msg;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV ||
	    wc->byte_len != MSG_SIZE || wc->qp_num != id->qp->qp_num ||
	    wc->wr_id >= o->msgs) {
		fprintf(stderr, "bad recv wc: status %s opcode %d len %u qp %u wr_id %llu\n",
			ibv_wc_status_str(wc->status), wc->opcode,
			wc->byte_len, wc->qp_num,
			(unsigned long long)wc->wr_id);
		return -1;
	}
	if (check_msg(buf + wc->wr_id * MSG_SIZE, &msg) || msg >= o->msgs ||
	    seen[msg]++) {
		fprintf(stderr, "slot %llu: message %u corrupt or repeated\n",
			(unsigned long long)wc->wr_id, msg);
		return -1;
	}
	return 0;
}

static int server_teardown(struct rdma_cm_id *id, struct ibv_mr *mr)
{
	int ret = 0;

	rdma_disconnect(id);
	rdma_destroy_qp(id);
	/* rdma_destroy_srq returns nothing: destroy it here to see the result */
	if (ibv_destroy_srq(id->srq)) {
		fprintf(stderr, "destroy_srq after its QP: failed\n");
		ret = -1;
	}
	id->srq = NULL;
	if (mr)
		rdma_dereg_mr(mr);
	return ret;
}

static int run_server(const struct opts *o)
{
	struct rdma_addrinfo *res = resolve(o);
	struct rdma_cm_id *listen_id, *id;
	struct ibv_mr *mr = NULL;
	uint8_t seen[MAX_MSGS] = {};
	struct ibv_wc wc;
	unsigned int i;
	uint8_t *buf;
	int ret = -1;

	buf = calloc(o->msgs, MSG_SIZE);
	if (!res || !buf)
		return 1;
	if (rdma_create_ep(&listen_id, res, NULL, NULL) ||
	    rdma_listen(listen_id, 1) || rdma_get_request(listen_id, &id)) {
		perror("listen");
		return 1;
	}
	if (server_setup(id, o, buf, &mr))
		goto out;
	for (i = 0; i < o->msgs; i++) {
		if (rdma_get_recv_comp(id, &wc) <= 0) {
			perror("rdma_get_recv_comp");
			goto out;
		}
		if (server_check_wc(id, &wc, o, buf, seen))
			goto out;
	}
	printf("srqcm server: %u messages verified through the SRQ\n", o->msgs);
	ret = 0;
out:
	if (server_teardown(id, mr))
		ret = -1;
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
	rdma_freeaddrinfo(res);
	free(buf);
	return ret ? 1 : 0;
}

static int client_send_all(struct rdma_cm_id *id, const struct opts *o,
			   uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < o->msgs; i++) {
		if (rdma_post_send(id, NULL, buf + (size_t)i * MSG_SIZE,
				   MSG_SIZE, mr, 0)) {
			perror("rdma_post_send");
			return -1;
		}
		if (rdma_get_send_comp(id, &wc) <= 0 ||
		    wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "send %u: %s\n", i,
				ibv_wc_status_str(wc.status));
			return -1;
		}
	}
	return 0;
}

static int run_client(const struct opts *o)
{
	struct rdma_addrinfo *res = resolve(o);
	struct ibv_qp_init_attr qattr = {};
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	unsigned int i;
	uint8_t *buf;
	int ret = 1;

	buf = calloc(o->msgs, MSG_SIZE);
	if (!res || !buf)
		return 1;
	for (i = 0; i < o->msgs; i++)
		fill(buf + (size_t)i * MSG_SIZE, i);
	qattr.qp_type = IBV_QPT_RC;
	qattr.cap.max_send_wr = 1;
	qattr.cap.max_recv_wr = 1;
	qattr.cap.max_send_sge = 1;
	qattr.cap.max_recv_sge = 1;
	qattr.sq_sig_all = 1;
	if (rdma_create_ep(&id, res, NULL, &qattr)) {
		perror("rdma_create_ep");
		return 1;
	}
	mr = rdma_reg_msgs(id, buf, (size_t)o->msgs * MSG_SIZE);
	if (!mr || rdma_connect(id, NULL)) {
		perror("connect");
		goto out;
	}
	if (!client_send_all(id, o, buf, mr)) {
		printf("srqcm client: %u messages sent\n", o->msgs);
		ret = 0;
	}
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
out:
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = "7471", .msgs = 64 };
	int c;

	while ((c = getopt(argc, argv, "sca:p:n:")) != -1) {
		switch (c) {
		case 's': o.server = 1; break;
		case 'c': o.server = 0; break;
		case 'a': o.addr = optarg; break;
		case 'p': o.port = optarg; break;
		case 'n': o.msgs = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (!o.addr || !o.msgs || o.msgs > MAX_MSGS) {
		fprintf(stderr, "usage: srqcm -s|-c -a ADDR [-p PORT] [-n 1..%u]\n",
			MAX_MSGS);
		return 2;
	}
	return o.server ? run_server(&o) : run_client(&o);
}
