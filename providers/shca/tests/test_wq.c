// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of work queues and RSS QPs (wq.c): the attribute
 * checks, the RSS request as it goes to the kernel, and ibv_post_wq_recv()
 * on a ring in plain memory with a fake doorbell.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test_unit.h"

#define FW_ENTRIES	4
#define FW_SHIFT	8
#define FW_MAX_SGE	2

static void test_wq_check_attr(void)
{
	struct ibv_pd pd = {};
	struct ibv_cq cq = {};
	struct ibv_wq_init_attr a;

	memset(&a, 0, sizeof(a));
	a.wq_type = IBV_WQT_RQ;
	a.pd = &pd;
	a.cq = &cq;
	a.max_wr = 1;
	CHECK(shca_wq_check_attr(&a) == 0);
	a.comp_mask = IBV_WQ_INIT_ATTR_FLAGS;
	CHECK(shca_wq_check_attr(&a) == 0);	/* no flag asked for */
	a.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	CHECK(shca_wq_check_attr(&a) == 0);
	a.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING |
			 IBV_WQ_FLAGS_SCATTER_FCS;
	CHECK(shca_wq_check_attr(&a) == EOPNOTSUPP);
	a.create_flags = IBV_WQ_FLAGS_SCATTER_FCS;
	CHECK(shca_wq_check_attr(&a) == EOPNOTSUPP);
	a.create_flags = IBV_WQ_FLAGS_DELAY_DROP;
	CHECK(shca_wq_check_attr(&a) == 0);
	a.create_flags = IBV_WQ_FLAGS_DELAY_DROP | IBV_WQ_FLAGS_SCATTER_FCS;
	CHECK(shca_wq_check_attr(&a) == EOPNOTSUPP);
	a.create_flags = IBV_WQ_FLAGS_PCI_WRITE_END_PADDING;
	CHECK(shca_wq_check_attr(&a) == EOPNOTSUPP);
	a.create_flags = IBV_WQ_FLAGS_RESERVED;
	CHECK(shca_wq_check_attr(&a) == EINVAL);
	a.create_flags = 0;
	a.comp_mask = IBV_WQ_INIT_ATTR_RESERVED;
	CHECK(shca_wq_check_attr(&a) == EINVAL);
	a.comp_mask = 0;
	a.wq_type = IBV_WQT_RQ + 1;
	CHECK(shca_wq_check_attr(&a) == EOPNOTSUPP);
	a.wq_type = IBV_WQT_RQ;
	a.max_wr = 0;
	CHECK(shca_wq_check_attr(&a) == EINVAL);
	a.max_wr = 1;
	a.cq = NULL;
	CHECK(shca_wq_check_attr(&a) == EINVAL);
	a.cq = &cq;
	a.pd = NULL;
	CHECK(shca_wq_check_attr(&a) == EINVAL);
}

static const uint8_t test_key[SHCA_RX_HASH_KEY_LEN] = {
	0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2,
	0x83, 0x19, 0xdb, 0x1a, 0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9,
	0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7, 0xd9, 0x56,
	0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

static void rss_attr(struct ibv_qp_init_attr_ex *a, struct ibv_pd *pd,
		     struct ibv_rwq_ind_table *t)
{
	memset(a, 0, sizeof(*a));
	a->qp_type = IBV_QPT_RAW_PACKET;
	a->comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
		       IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a->pd = pd;
	a->rwq_ind_tbl = t;
	a->rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	a->rx_hash_conf.rx_hash_key_len = SHCA_RX_HASH_KEY_LEN;
	a->rx_hash_conf.rx_hash_key = (uint8_t *)test_key;
	a->rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
					      IBV_RX_HASH_DST_IPV4;
}

static void test_rss_check_attr(void)
{
	struct ibv_rwq_ind_table t = {};
	struct ibv_qp_init_attr_ex a;
	struct ibv_pd pd = {};
	struct ibv_cq cq = {};

	rss_attr(&a, &pd, &t);
	CHECK(shca_rss_check_attr(&a) == 0);
	a.rx_hash_conf.rx_hash_fields_mask = SHCA_RX_HASH_FIELDS;
	CHECK(shca_rss_check_attr(&a) == 0);	/* combos: the kernel's */
	a.rx_hash_conf.rx_hash_fields_mask |= IBV_RX_HASH_IPSEC_SPI;
	CHECK(shca_rss_check_attr(&a) == EOPNOTSUPP);
	a.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_INNER;
	CHECK(shca_rss_check_attr(&a) == EOPNOTSUPP);
	a.rx_hash_conf.rx_hash_fields_mask = 1ULL << 12;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.rx_hash_conf.rx_hash_key_len = 39;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	a.rx_hash_conf.rx_hash_key_len = 41;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.rx_hash_conf.rx_hash_key = NULL;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.rx_hash_conf.rx_hash_function = 0;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.comp_mask &= ~IBV_QP_INIT_ATTR_RX_HASH;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.comp_mask &= ~IBV_QP_INIT_ATTR_IND_TABLE;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.qp_type = IBV_QPT_UD;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	CHECK(shca_rss_check_attr(&a) == EOPNOTSUPP);
	rss_attr(&a, &pd, &t);
	a.recv_cq = &cq;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.send_cq = &cq;
	a.cap.max_send_wr = 1;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.cap.max_recv_sge = 1;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, &t);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	CHECK(shca_rss_check_attr(&a) == EINVAL);
	rss_attr(&a, &pd, NULL);
	CHECK(shca_rss_check_attr(&a) == EINVAL);
}

static void test_rss_fill_req(void)
{
	struct ibv_rwq_ind_table t = {};
	struct shca_create_qp_req req;
	struct ibv_qp_init_attr_ex a;
	struct ibv_pd pd = {};

	rss_attr(&a, &pd, &t);
	memset(&req, 0xff, sizeof(req));
	shca_rss_fill_req(&req, &a.rx_hash_conf);
	CHECK(req.comp_mask == SHCA_CREATE_QP_REQ_CMASK_RX_HASH);
	CHECK(req.reserved_32 == 0);
	CHECK(req.rx_hash_fields_mask ==
	      (SHCA_RX_HASH_SRC_IPV4 | SHCA_RX_HASH_DST_IPV4));
	CHECK(req.rx_hash_function == SHCA_RX_HASH_FUNC_TOEPLITZ);
	CHECK(req.rx_hash_key_len == SHCA_RX_HASH_KEY_LEN);
	CHECK(!memcmp(req.rx_hash_key, test_key, sizeof(test_key)));
	CHECK(!req.reserved_144[0] && !req.reserved_144[5]);
	/* the libibverbs and the uapi values agree */
	CHECK(IBV_RX_HASH_FUNC_TOEPLITZ == SHCA_RX_HASH_FUNC_TOEPLITZ);
	CHECK((uint64_t)IBV_RX_HASH_DST_PORT_UDP ==
	      (uint64_t)SHCA_RX_HASH_DST_PORT_UDP);
	CHECK((uint64_t)IBV_RX_HASH_IPSEC_SPI ==
	      (uint64_t)SHCA_RX_HASH_IPSEC_SPI);
	CHECK((uint64_t)IBV_RX_HASH_INNER == (uint64_t)SHCA_RX_HASH_INNER);
}

struct fake_wq {
	struct shca_rwq rwq;
	struct shca_ring_ctl ctl;
	uint8_t ring[FW_ENTRIES][1u << FW_SHIFT] __attribute__((aligned(64)));
	int doorbells;
	int db_ret;
};

static int fake_doorbell(struct shca_rwq *rwq)
{
	struct fake_wq *f = (struct fake_wq *)rwq;

	f->doorbells++;
	return f->db_ret;
}

static void fake_wq_init(struct fake_wq *f, enum ibv_wq_state state)
{
	memset(f, 0, sizeof(*f));
	pthread_spin_init(&f->rwq.wq.lock, PTHREAD_PROCESS_PRIVATE);
	f->rwq.wq.ring.map = f->ring;
	f->rwq.wq.ring.map_len = sizeof(f->ring);
	f->rwq.wq.ring.ctl = &f->ctl;
	f->rwq.wq.ring.entries = &f->ring[0][0];
	f->rwq.wq.ring.mask = FW_ENTRIES - 1;
	f->rwq.wq.ring.entry_shift = FW_SHIFT;
	f->rwq.wq.max_sge = FW_MAX_SGE;
	f->rwq.doorbell = fake_doorbell;
	f->rwq.ibv_wq.state = state;
	f->rwq.ibv_wq.post_recv = shca_post_wq_recv;
}

static void test_post_wq_recv(void)
{
	struct ibv_sge sge[FW_MAX_SGE + 1] = {
		{ .addr = 0x1000, .length = 64, .lkey = 7 },
		{ .addr = 0x2000, .length = 32, .lkey = 8 },
		{ .addr = 0x3000, .length = 16, .lkey = 9 },
	};
	struct ibv_recv_wr wr[FW_ENTRIES + 1], *bad;
	const struct shca_recv_wqe *wqe;
	const struct shca_sge *s;
	static struct fake_wq f;
	unsigned int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i <= FW_ENTRIES; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 2;
		if (i < FW_ENTRIES)
			wr[i].next = &wr[i + 1];
	}

	/* ready: a list lands in the ring, no doorbell */
	fake_wq_init(&f, IBV_WQS_RDY);
	wr[1].next = NULL;
	bad = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == 0);
	CHECK(bad == NULL && f.ctl.prod == 2 && f.doorbells == 0);
	wqe = (const struct shca_recv_wqe *)f.ring[1];
	s = (const struct shca_sge *)(wqe + 1);
	CHECK(wqe->wr_id == 101 && wqe->num_sge == 2 && !wqe->reserved_96);
	CHECK(s[0].addr == 0x1000 && s[0].length == 64 && s[0].lkey == 7);
	CHECK(s[1].addr == 0x2000 && s[1].length == 32 && s[1].lkey == 8);

	/* too many SGEs: nothing of it is posted */
	wr[2].num_sge = FW_MAX_SGE + 1;
	wr[2].next = NULL;
	bad = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, &wr[2], &bad) == EINVAL);
	CHECK(bad == &wr[2] && f.ctl.prod == 2);
	wr[2].num_sge = 2;

	/* full ring: ENOMEM at the first that does not fit */
	wr[2].next = &wr[3];
	wr[4].next = NULL;
	bad = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, &wr[2], &bad) == ENOMEM);
	CHECK(bad == &wr[4] && f.ctl.prod == FW_ENTRIES);
	pthread_spin_destroy(&f.rwq.wq.lock);

	/* reset: kept in the ring for RDY, no doorbell */
	fake_wq_init(&f, IBV_WQS_RESET);
	wr[0].next = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == 0);
	CHECK(f.ctl.prod == 1 && f.doorbells == 0);
	pthread_spin_destroy(&f.rwq.wq.lock);

	/* error state: posted, then the doorbell has the kernel flush */
	fake_wq_init(&f, IBV_WQS_ERR);
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == 0);
	CHECK(f.ctl.prod == 1 && f.doorbells == 1);
	f.db_ret = EIO;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == EIO);
	CHECK(f.ctl.prod == 2 && f.doorbells == 2);
	/* nothing posted: no doorbell */
	wr[0].num_sge = FW_MAX_SGE + 1;
	bad = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == EINVAL);
	CHECK(bad == wr && f.ctl.prod == 2 && f.doorbells == 2);
	wr[0].num_sge = 2;
	pthread_spin_destroy(&f.rwq.wq.lock);

	/* an unmapped ring fails every post */
	fake_wq_init(&f, IBV_WQS_RDY);
	f.rwq.wq.ring.map = NULL;
	bad = NULL;
	CHECK(ibv_post_wq_recv(&f.rwq.ibv_wq, wr, &bad) == EIO);
	CHECK(bad == wr && f.ctl.prod == 0);
	pthread_spin_destroy(&f.rwq.wq.lock);
}

void test_wq(void)
{
	test_wq_check_attr();
	test_rss_check_attr();
	test_rss_fill_req();
	test_post_wq_recv();
}
