// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests of tag-matching SRQs (tm.c and the TM parts of cq.c and
 * srq.c).  The operation ring and the CQ ring are plain memory, and a
 * fake kernel stands in for the doorbell (shca_tm.doorbell): it executes
 * the published operations, writes their results and advances cons, as
 * shca-abi.h says the kernel does.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_unit.h"

/* ------------------------------------------------------------------ */
/* A TM SRQ with a fake kernel                                        */
/* ------------------------------------------------------------------ */

#define FT_OPS		4
#define FT_MAX_SGE	2
#define FT_SHIFT	7
#define FT_TAGS		4
#define FT_SRQN		0x42
#define FT_LOG		32

struct fake_tm {
	struct shca_srq srq;
	struct shca_tm tm;
	struct shca_tm_op_priv priv[FT_OPS];
	struct shca_ring_ctl ctl;
	uint8_t ring[FT_OPS][1u << FT_SHIFT] __attribute__((aligned(64)));
	/* the kernel */
	int doorbells;
	int db_ret;			/* what the doorbell returns */
	int exec_limit;			/* ops executed per doorbell, -1: all */
	uint32_t cons_bump;		/* added to the cons it publishes */
	uint8_t results[FT_LOG];	/* result of the n-th op executed */
	struct shca_tm_op_wqe seen[FT_LOG];
	struct shca_sge seen_sge[FT_LOG][FT_MAX_SGE];
	int nexec;
	/* instead of the log: a model (the thread test) */
	void (*exec)(struct fake_tm *f, struct shca_tm_op_wqe *op);
	void (*before)(struct fake_tm *f);
	void *model;
};

static int fake_tm_kernel(struct shca_srq *srq)
{
	struct fake_tm *f = container_of(srq, struct fake_tm, srq);
	uint32_t prod = __atomic_load_n(&f->ctl.prod, __ATOMIC_ACQUIRE);
	uint32_t cons = f->ctl.cons;
	struct shca_tm_op_wqe *op;
	int n = 0;

	f->doorbells++;
	if (f->before)
		f->before(f);
	while (cons != prod && (f->exec_limit < 0 || n < f->exec_limit)) {
		op = (struct shca_tm_op_wqe *)f->ring[cons & (FT_OPS - 1)];
		if (f->exec) {
			f->exec(f, op);
		} else if (f->nexec < FT_LOG) {
			f->seen[f->nexec] = *op;
			memcpy(f->seen_sge[f->nexec], op + 1,
			       sizeof(f->seen_sge[0]));
			op->result = f->results[f->nexec];
		}
		f->nexec++;
		cons++;
		n++;
	}
	__atomic_store_n(&f->ctl.cons, cons + f->cons_bump, __ATOMIC_RELEASE);
	return f->db_ret;
}

static void fake_tm_init(struct fake_tm *f, uint32_t tags)
{
	memset(f, 0, sizeof(*f));
	memset(f->ring, 0xa5, sizeof(f->ring));	/* stale bytes */
	pthread_spin_init(&f->srq.wq.lock, PTHREAD_PROCESS_PRIVATE);
	f->srq.vsrq.srq_type = IBV_SRQT_TM;
	f->srq.srqn = FT_SRQN;
	f->srq.tm = &f->tm;
	pthread_mutex_init(&f->tm.lock, NULL);
	f->tm.ring.map = f->ring;
	f->tm.ring.map_len = sizeof(f->ring);
	f->tm.ring.ctl = &f->ctl;
	f->tm.ring.entries = &f->ring[0][0];
	f->tm.ring.mask = FT_OPS - 1;
	f->tm.ring.entry_shift = FT_SHIFT;
	f->tm.max_ops = FT_OPS;
	f->tm.max_sge = FT_MAX_SGE;
	f->tm.ops = f->priv;
	f->tm.doorbell = fake_tm_kernel;
	f->exec_limit = -1;
	CHECK(shca_tm_handles_init(&f->tm.handles, tags) == 0);
}

static void fake_tm_fini(struct fake_tm *f)
{
	shca_tm_handles_destroy(&f->tm.handles);
	pthread_mutex_destroy(&f->tm.lock);
	pthread_spin_destroy(&f->srq.wq.lock);
}

static int post_ops(struct fake_tm *f, struct ibv_ops_wr *wr,
		    struct ibv_ops_wr **bad)
{
	*bad = NULL;
	return shca_post_srq_ops(&f->srq.vsrq.srq, wr, bad);
}

static struct ibv_ops_wr op_add(uint64_t wr_id, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_ADD,
		.flags = flags,
		.tm.handle = 0xdeadbeef,	/* an output */
		.tm.add.recv_wr_id = wr_id + 1000,
		.tm.add.tag = wr_id << 8,
		.tm.add.mask = ~0ull,
	};
	return wr;
}

static struct ibv_ops_wr op_del(uint64_t wr_id, uint32_t handle, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_DEL,
		.flags = flags,
		.tm.handle = handle,
	};
	return wr;
}

static struct ibv_ops_wr op_sync(uint64_t wr_id, uint32_t cnt)
{
	struct ibv_ops_wr wr = {
		.wr_id = wr_id,
		.opcode = IBV_WR_TAG_SYNC,
		.flags = IBV_OPS_TM_SYNC,
		.tm.unexpected_cnt = cnt,
	};
	return wr;
}

/* ------------------------------------------------------------------ */
/* Handles                                                            */
/* ------------------------------------------------------------------ */

static void test_tm_handles(void)
{
	struct shca_tm_handles h;
	uint32_t v = 99, i;

	CHECK(shca_tm_handles_init(&h, 0) == EINVAL);
	CHECK(shca_tm_handles_init(&h, SHCA_TM_MAX_HANDLES + 1) == EINVAL);
	CHECK(shca_tm_handles_init(&h, 3) == 0);
	/* handed out in order, then the pool is empty */
	for (i = 0; i < 3; i++)
		CHECK(shca_tm_handle_get(&h, &v) == 0 && v == i &&
		      shca_tm_handle_busy(&h, i));
	CHECK(shca_tm_handle_get(&h, &v) == ENOMEM && v == 2);
	/* only busy handles in range come back, once */
	CHECK(!shca_tm_handle_put(&h, 3));
	CHECK(!shca_tm_handle_put(&h, UINT32_MAX));
	CHECK(!shca_tm_handle_busy(&h, 3));
	CHECK(shca_tm_handle_put(&h, 1));
	CHECK(!shca_tm_handle_put(&h, 1));
	CHECK(!shca_tm_handle_busy(&h, 1) && shca_tm_handle_busy(&h, 0));
	CHECK(h.nfree == 1);
	CHECK(shca_tm_handle_get(&h, &v) == 0 && v == 1);
	/* FIFO: the handle free longest goes out first */
	CHECK(shca_tm_handle_put(&h, 2));
	CHECK(shca_tm_handle_put(&h, 0));
	CHECK(shca_tm_handle_get(&h, &v) == 0 && v == 2);
	CHECK(shca_tm_handle_put(&h, 1));
	CHECK(shca_tm_handle_get(&h, &v) == 0 && v == 0);
	CHECK(shca_tm_handle_get(&h, &v) == 0 && v == 1);
	CHECK(shca_tm_handle_get(&h, &v) == ENOMEM);
	shca_tm_handles_destroy(&h);

	/* the whole 16-bit range */
	CHECK(shca_tm_handles_init(&h, SHCA_TM_MAX_HANDLES) == 0);
	for (i = 0; i < SHCA_TM_MAX_HANDLES; i++)
		CHECK(shca_tm_handle_get(&h, &v) == 0 && v == i);
	CHECK(shca_tm_handle_get(&h, &v) == ENOMEM);
	CHECK(shca_tm_handle_put(&h, 0xffff) && !shca_tm_handle_busy(&h, 0xffff));
	shca_tm_handles_destroy(&h);
}

/* ------------------------------------------------------------------ */
/* Create                                                             */
/* ------------------------------------------------------------------ */

static struct shca_create_srq_resp tm_resp(long page)
{
	struct shca_create_srq_resp r = {
		.comp_mask = SHCA_CREATE_SRQ_RESP_CMASK_RING |
			     SHCA_CREATE_SRQ_RESP_CMASK_TM,
		.srqn = FT_SRQN,
		.tm_max_tags = 64,
		.tm_max_ops = 8,
		.tm_max_sge = 1,
		.tm_ops = {
			.mmap_key = 2 * (uint64_t)page,
			.mmap_len = 3 * (uint64_t)page,
			.entries_offset = (uint32_t)page,
			.entries = 8,
			.entry_shift = 6,
			.chunk_shift = (uint32_t)__builtin_ctzl((unsigned long)page),
		},
	};
	return r;
}

static void test_tm_check_resp(void)
{
	const struct ibv_tm_cap want = { .max_num_tags = 64, .max_ops = 8 };
	long page = sysconf(_SC_PAGESIZE);
	struct shca_create_srq_resp r;

	static_assert(sizeof(struct shca_create_srq_req) == 8, "srq req");
	static_assert(offsetof(struct shca_create_srq_resp, tm_ops) == 64 &&
		      sizeof(struct shca_create_srq_resp) == 104,
		      "srq resp");
	static_assert(offsetof(struct ushca_create_xsrq, drv_payload) ==
		      sizeof(struct ibv_create_xsrq), "xsrq req");
	r = tm_resp(page);
	CHECK(shca_tm_check_resp(&want, &r) == 0);
	r.comp_mask &= ~SHCA_CREATE_SRQ_RESP_CMASK_TM;
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
	r = tm_resp(page);
	r.tm_max_tags = 63;				/* fewer than asked */
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
	r.tm_max_tags = SHCA_TM_MAX_HANDLES;		/* more is fine */
	CHECK(shca_tm_check_resp(&want, &r) == 0);
	r.tm_max_tags = SHCA_TM_MAX_HANDLES + 1;		/* not in a CQE */
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
	r = tm_resp(page);
	r.tm_max_ops = 7;
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
	r.tm_max_ops = 9;				/* ring holds 8 */
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
	r = tm_resp(page);
	r.tm_max_sge = 256;
	CHECK(shca_tm_check_resp(&want, &r) == EPROTO);
}

/* The ring mapped from a memfd standing in for the uverbs file. */
static void test_tm_create(void)
{
	const struct ibv_tm_cap want = { .max_num_tags = 10, .max_ops = 5 };
	long page = sysconf(_SC_PAGESIZE);
	struct shca_create_srq_resp r = tm_resp(page);
	static struct shca_srq srq;
	static struct shca_cq cq;
	struct shca_ring_ctl ctl = { .prod = 77, .cons = 77 };
	int fd;

	fd = memfd_create("shca-tm", 0);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)(6 * page)) == 0);
	CHECK(pwrite(fd, &ctl, sizeof(ctl), (off_t)r.tm_ops.mmap_key) ==
	      sizeof(ctl));
	CHECK(shca_tm_create(&srq, &cq, &want, &r, fd) == 0);
	CHECK(srq.tm && srq.tm->cq == &cq && srq.tm->max_ops == 8 &&
	      srq.tm->max_sge == 1 && srq.tm->handles.max == 64 &&
	      srq.tm->handles.nfree == 64 && srq.tm->prod == 77 &&
	      srq.tm->ring.mask == 7 && srq.tm->doorbell && !srq.tm->cq_next);
	shca_tm_destroy(&srq);
	CHECK(!srq.tm);

	/* two SGEs do not fit a 64-byte entry */
	r.tm_max_sge = 2;
	CHECK(shca_tm_create(&srq, &cq, &want, &r, fd) == EPROTO && !srq.tm);
	r = tm_resp(page);
	r.tm_ops.entries = 6;
	r.tm_max_ops = 6;
	CHECK(shca_tm_create(&srq, &cq, &want, &r, fd) == EPROTO && !srq.tm);
	r = tm_resp(page);
	r.tm_max_ops = 4;				/* fewer than asked */
	CHECK(shca_tm_create(&srq, &cq, &want, &r, fd) == EPROTO && !srq.tm);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* ibv_post_srq_ops                                                    */
/* ------------------------------------------------------------------ */

static void test_tm_post_encoding(void)
{
	static struct fake_tm f;
	const struct ibv_sge sg[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x11 },
		{ .addr = 0x2000, .length = 200, .lkey = 0x22 },
	};
	struct ibv_ops_wr add, del, sync, add2, *bad;
	struct shca_tm_op_wqe *w;

	fake_tm_init(&f, FT_TAGS);
	add = op_add(0x77, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC);
	add.tm.unexpected_cnt = 9;
	add.tm.add.sg_list = (struct ibv_sge *)sg;
	add.tm.add.num_sge = 2;
	add.tm.add.tag = 0x1234567890abcdefull;
	add.tm.add.mask = 0xffff0000ffff0000ull;
	CHECK(post_ops(&f, &add, &bad) == 0 && !bad);
	CHECK(add.tm.handle == 0 && f.doorbells == 1 && f.nexec == 1);
	CHECK(f.ctl.prod == 1 && f.ctl.cons == 1 && f.tm.prod == 1);
	CHECK(shca_tm_handle_busy(&f.tm.handles, 0));
	w = &f.seen[0];
	CHECK(w->wr_id == 0x77 && w->opcode == SHCA_OP_TM_ADD &&
	      w->num_sge == 2 && w->result == 0 &&
	      w->flags == (SHCA_TM_OP_F_SIGNALED | SHCA_TM_OP_F_SYNC));
	CHECK(w->handle == 0 && w->unexpected_cnt == 9 && w->reserved_160 == 0);
	CHECK(w->recv_wr_id == 0x77 + 1000 && w->tag == 0x1234567890abcdefull &&
	      w->mask == 0xffff0000ffff0000ull);
	CHECK(!memcmp(f.seen_sge[0], sg, sizeof(sg)));

	/* DEL: no SYNC flag, so no count; no tag, mask or SGEs */
	del = op_del(0x78, 0, IBV_OPS_SIGNALED);
	del.tm.unexpected_cnt = 5;
	del.tm.add.tag = 0x55;
	del.tm.add.num_sge = 1;
	CHECK(post_ops(&f, &del, &bad) == 0 && f.doorbells == 2);
	w = &f.seen[1];
	CHECK(w->wr_id == 0x78 && w->opcode == SHCA_OP_TM_DEL &&
	      w->num_sge == 0 && w->flags == SHCA_TM_OP_F_SIGNALED &&
	      w->handle == 0 && w->unexpected_cnt == 0 && w->tag == 0 &&
	      w->mask == 0 && w->recv_wr_id == 0);
	CHECK(!shca_tm_handle_busy(&f.tm.handles, 0));	/* deleted */

	/* SYNC and an unsignaled ADD without SGEs, in one call */
	sync = op_sync(0x79, 0x12345);
	add2 = op_add(0x7a, 0);
	sync.next = &add2;
	CHECK(post_ops(&f, &sync, &bad) == 0 && f.doorbells == 3 &&
	      f.nexec == 4 && f.ctl.prod == 4);
	w = &f.seen[2];
	CHECK(w->opcode == SHCA_OP_TM_SYNC && w->flags == SHCA_TM_OP_F_SYNC &&
	      w->unexpected_cnt == 0x12345 && w->handle == 0 &&
	      w->wr_id == 0x79 && w->num_sge == 0 && w->tag == 0);
	w = &f.seen[3];
	CHECK(w->opcode == SHCA_OP_TM_ADD && w->flags == 0 &&
	      w->num_sge == 0 && w->unexpected_cnt == 0);
	/* handle 0 went to the back of the queue */
	CHECK(add2.tm.handle == 1 && w->handle == 1);

	/* nothing to post: no doorbell */
	CHECK(post_ops(&f, NULL, &bad) == 0 && f.doorbells == 3);
	fake_tm_fini(&f);
}

static void test_tm_post_errors(void)
{
	static struct fake_tm f;
	static struct shca_srq basic;
	struct ibv_ops_wr a[FT_OPS + 1], b, *bad;
	struct ibv_sge sg[FT_MAX_SGE + 1] = {};
	int i;

	/* not a TM SRQ */
	basic.vsrq.srq_type = IBV_SRQT_BASIC;
	a[0] = op_sync(1, 0);
	bad = NULL;
	CHECK(shca_post_srq_ops(&basic.vsrq.srq, &a[0], &bad) == EINVAL &&
	      bad == &a[0]);

	fake_tm_init(&f, FT_TAGS);
	/* DEL of a handle never handed out, or out of range */
	b = op_del(2, 3, 0);
	CHECK(post_ops(&f, &b, &bad) == EINVAL && bad == &b);
	b.tm.handle = FT_TAGS + 5;
	CHECK(post_ops(&f, &b, &bad) == EINVAL && bad == &b);
	b.tm.handle = UINT32_MAX;
	CHECK(post_ops(&f, &b, &bad) == EINVAL && bad == &b);
	/* too many SGEs, a negative count, an unknown opcode */
	a[0] = op_add(3, 0);
	a[0].tm.add.sg_list = sg;
	a[0].tm.add.num_sge = FT_MAX_SGE + 1;
	CHECK(post_ops(&f, &a[0], &bad) == EINVAL && bad == &a[0]);
	a[0].tm.add.num_sge = -1;
	CHECK(post_ops(&f, &a[0], &bad) == EINVAL && bad == &a[0]);
	a[0] = op_sync(4, 0);
	a[0].opcode = (enum ibv_ops_wr_opcode)3;
	CHECK(post_ops(&f, &a[0], &bad) == EINVAL && bad == &a[0]);
	/* none of it reached the ring or the kernel; no handle taken */
	CHECK(f.doorbells == 0 && f.ctl.prod == 0 && f.tm.prod == 0 &&
	      f.tm.handles.nfree == FT_TAGS);

	/* a chain stops at the bad one; the ones before it are posted */
	a[0] = op_add(5, 0);
	a[0].tm.add.sg_list = sg;
	a[0].tm.add.num_sge = FT_MAX_SGE;
	b = op_del(6, 2, 0);				/* not handed out */
	a[0].next = &b;
	CHECK(post_ops(&f, &a[0], &bad) == EINVAL && bad == &b);
	CHECK(f.doorbells == 1 && f.nexec == 1 && f.ctl.prod == 1 &&
	      a[0].tm.handle == 0 && shca_tm_handle_busy(&f.tm.handles, 0));

	/* more than max_ops in one call: ENOMEM at the first that does not fit */
	for (i = 0; i <= FT_OPS; i++) {
		a[i] = op_sync(10 + i, 0);
		a[i].next = i < FT_OPS ? &a[i + 1] : NULL;
	}
	CHECK(post_ops(&f, &a[0], &bad) == ENOMEM && bad == &a[FT_OPS]);
	CHECK(f.doorbells == 2 && f.nexec == 1 + FT_OPS &&
	      f.ctl.prod == 1 + FT_OPS);
	/* exactly max_ops fit */
	a[FT_OPS - 1].next = NULL;
	CHECK(post_ops(&f, &a[0], &bad) == 0 && f.nexec == 1 + 2 * FT_OPS);
	fake_tm_fini(&f);

	/* the tag list is full: ENOMEM at the ADD with no handle */
	fake_tm_init(&f, 2);
	for (i = 0; i < 3; i++) {
		a[i] = op_add(20 + i, 0);
		a[i].next = i < 2 ? &a[i + 1] : NULL;
	}
	CHECK(post_ops(&f, &a[0], &bad) == ENOMEM && bad == &a[2]);
	CHECK(f.nexec == 2 && a[0].tm.handle == 0 && a[1].tm.handle == 1 &&
	      a[2].tm.handle == 0xdeadbeef && f.tm.handles.nfree == 0);
	a[2].next = NULL;
	CHECK(post_ops(&f, &a[2], &bad) == ENOMEM && bad == &a[2]);
	CHECK(f.doorbells == 1);
	/* a DEL or a SYNC still goes */
	b = op_del(30, 1, 0);
	CHECK(post_ops(&f, &b, &bad) == 0 && f.tm.handles.nfree == 1);
	CHECK(post_ops(&f, &a[2], &bad) == 0 && a[2].tm.handle == 1);
	fake_tm_fini(&f);
}

/* The results give back the handles of failed ADDs and good DELs only. */
static void test_tm_results(void)
{
	static struct fake_tm f;
	struct ibv_ops_wr a, b, c, d, *bad;

	fake_tm_init(&f, FT_TAGS);
	f.results[0] = IBV_WC_TM_ERR;		/* a fails */
	f.results[1] = 0;			/* b is listed */
	f.results[2] = IBV_WC_TM_ERR;		/* DEL b fails (consumed) */
	f.results[3] = IBV_WC_TM_ERR;		/* a SYNC fails */
	a = op_add(1, 0);
	b = op_add(2, 0);
	c = op_del(3, 0, 0);
	a.next = &b;
	CHECK(post_ops(&f, &a, &bad) == 0);
	CHECK(a.tm.handle == 0 && b.tm.handle == 1);
	CHECK(!shca_tm_handle_busy(&f.tm.handles, 0) &&
	      shca_tm_handle_busy(&f.tm.handles, 1));
	c.tm.handle = 1;
	d = op_sync(4, 1);
	c.next = &d;
	CHECK(post_ops(&f, &c, &bad) == 0);
	CHECK(shca_tm_handle_busy(&f.tm.handles, 1) &&
	      f.tm.handles.nfree == FT_TAGS - 1);
	/* a DEL that works gives it back */
	f.results[4] = 0;
	CHECK(post_ops(&f, &c, &bad) == 0);
	CHECK(!shca_tm_handle_busy(&f.tm.handles, 1) &&
	      f.tm.handles.nfree == FT_TAGS);
	fake_tm_fini(&f);
}

/* A doorbell that does not get through withdraws what it did not run. */
static void test_tm_doorbell_fail(void)
{
	static struct fake_tm f;
	struct ibv_ops_wr a, b, c, d, *bad;

	fake_tm_init(&f, FT_TAGS);
	a = op_add(1, 0);
	CHECK(post_ops(&f, &a, &bad) == 0 && a.tm.handle == 0);
	/* the kernel runs one of three and fails */
	f.exec_limit = 1;
	f.db_ret = EIO;
	b = op_add(2, 0);
	c = op_add(3, 0);
	d = op_del(4, 0, 0);
	b.next = &c;
	c.next = &d;
	CHECK(post_ops(&f, &b, &bad) == EIO && bad == &c);
	CHECK(f.ctl.prod == 2 && f.tm.prod == 2 && f.ctl.cons == 2);
	CHECK(b.tm.handle == 1 && shca_tm_handle_busy(&f.tm.handles, 1));
	CHECK(c.tm.handle == 2 && !shca_tm_handle_busy(&f.tm.handles, 2));
	CHECK(shca_tm_handle_busy(&f.tm.handles, 0));	/* DEL withdrawn */
	CHECK(f.tm.handles.nfree == FT_TAGS - 2);

	/* it claims success but ran nothing */
	f.exec_limit = 0;
	f.db_ret = 0;
	CHECK(post_ops(&f, &c, &bad) == EIO && bad == &c);
	CHECK(f.ctl.prod == 2 && f.tm.handles.nfree == FT_TAGS - 2);
	/* it fails but ran everything: all posted */
	f.exec_limit = -1;
	f.db_ret = EINVAL;
	d.next = NULL;
	CHECK(post_ops(&f, &d, &bad) == 0 && !bad);
	CHECK(!shca_tm_handle_busy(&f.tm.handles, 0) && f.ctl.prod == 3);
	/* a consumer index past what we published: nothing ran */
	f.db_ret = 0;
	f.cons_bump = 100;
	c.next = NULL;
	CHECK(post_ops(&f, &c, &bad) == EIO && bad == &c);
	CHECK(f.ctl.prod == 3 && f.tm.prod == 3 &&
	      f.tm.handles.nfree == FT_TAGS - 1);
	fake_tm_fini(&f);
}

/* ------------------------------------------------------------------ */
/* Completions                                                        */
/* ------------------------------------------------------------------ */

#define TC_ENTRIES 64

struct tm_cq {
	struct shca_cq cq;
	struct shca_ring_ctl ctl;
	struct shca_cqe cqe[TC_ENTRIES];
};

static void tm_cq_init(struct tm_cq *f)
{
	static_assert(sizeof(struct shca_cqe) == 64, "cqe size");
	memset(f, 0, sizeof(*f));
	pthread_spin_init(&f->cq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&f->cq.tm_lock, PTHREAD_PROCESS_PRIVATE);
	f->cq.ring.map = f->cqe;
	f->cq.ring.ctl = &f->ctl;
	f->cq.ring.entries = (uint8_t *)f->cqe;
	f->cq.ring.mask = TC_ENTRIES - 1;
	f->cq.ring.entry_shift = 6;
	shca_cq_set_ex_ops(&f->cq.vcq.cq_ex);
}

static void tm_cq_fini(struct tm_cq *f)
{
	pthread_spin_destroy(&f->cq.tm_lock);
	pthread_spin_destroy(&f->cq.lock);
}

/* The kernel's side: wait for room, write, publish. */
static void tm_cq_push(struct tm_cq *f, const struct shca_cqe *e)
{
	uint32_t prod = f->ctl.prod;

	while (prod - __atomic_load_n(&f->ctl.cons, __ATOMIC_ACQUIRE) >=
	       TC_ENTRIES)
		sched_yield();
	f->cqe[prod & (TC_ENTRIES - 1)] = *e;
	__atomic_store_n(&f->ctl.prod, prod + 1, __ATOMIC_RELEASE);
}

static struct shca_cqe tm_cqe(uint8_t opcode, uint8_t status, uint16_t tm_flags,
			      uint16_t handle)
{
	struct shca_cqe e = {
		.wr_id = 0x1000 + handle,
		.status = status,
		.opcode = opcode,
		.flags = SHCA_CQE_F_TM,
		.byte_len = 64,
		.qp_num = 17,
		.tm_tag = 0xfeedface12345678ull,
		.tm_flags = tm_flags,
		.tm_handle = handle,
		.tm_app_ctx = 0xc0ffee,
		.tm_srqn = FT_SRQN,
	};
	return e;
}

static int poll1(struct tm_cq *f, const struct shca_cqe *e, struct ibv_wc *wc)
{
	tm_cq_push(f, e);
	return shca_poll_cq(&f->cq.vcq.cq, 1, wc);
}

/* What ibv_poll_cq reports, and which completions give handles back. */
static void test_tm_cqe(void)
{
	static struct fake_tm t;
	static struct tm_cq f;
	struct shca_tm_handles *h = &t.tm.handles;
	struct shca_cqe e;
	struct ibv_wc wc;
	uint32_t v, i;

	tm_cq_init(&f);
	fake_tm_init(&t, FT_TAGS);
	shca_cq_add_tm_srq(&f.cq, &t.srq);
	CHECK(f.cq.tm_srqs == &t.srq);
	for (i = 0; i < FT_TAGS; i++)
		CHECK(shca_tm_handle_get(h, &v) == 0);

	/* an eager match: both flags, the handle comes back */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH |
		   SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE, 0);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TM_RECV &&
	      wc.wc_flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      wc.wr_id == 0x1000 && wc.byte_len == 64 && wc.qp_num == 17);
	CHECK(!shca_tm_handle_busy(h, 0) && h->nfree == 1);
	/* a match whose data is still to come keeps its handle */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH, 1);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.opcode == IBV_WC_TM_RECV && wc.wc_flags == IBV_WC_TM_MATCH &&
	      shca_tm_handle_busy(h, 1));
	/* an unexpected message asking for a SYNC, with immediate data */
	e = tm_cqe(IBV_WC_RECV, 0, SHCA_CQE_TM_F_SYNC_REQ, 0);
	e.flags |= SHCA_CQE_F_IMM;
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.wc_flags == (IBV_WC_TM_SYNC_REQ | IBV_WC_WITH_IMM));
	/* NO_TAG */
	e = tm_cqe(SHCA_WC_TM_NO_TAG, 0, 0, 0);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TM_NO_TAG &&
	      wc.wc_flags == 0);
	/* list operations return handles through their results, never here */
	e = tm_cqe(SHCA_WC_TM_ADD, IBV_WC_TM_ERR,
		   SHCA_CQE_TM_F_RELEASE | SHCA_CQE_TM_F_SYNC_REQ, 1);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_TM_ERR && wc.opcode == IBV_WC_TM_ADD &&
	      wc.wc_flags == IBV_WC_TM_SYNC_REQ && shca_tm_handle_busy(h, 1));
	e = tm_cqe(SHCA_WC_TM_DEL, 0, SHCA_CQE_TM_F_RELEASE, 1);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_TM_DEL &&
	      shca_tm_handle_busy(h, 1));
	e = tm_cqe(SHCA_WC_TM_SYNC, 0, SHCA_CQE_TM_F_RELEASE, 1);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.opcode == IBV_WC_TM_SYNC && shca_tm_handle_busy(h, 1));
	/* an error completion of a tagged buffer still gives it back */
	e = tm_cqe(SHCA_WC_TM_RECV, IBV_WC_TM_RNDV_INCOMPLETE,
		   SHCA_CQE_TM_F_MATCH | SHCA_CQE_TM_F_RELEASE, 1);
	e.flags |= SHCA_CQE_F_GRH;
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_TM_RNDV_INCOMPLETE &&
	      wc.wc_flags == IBV_WC_TM_MATCH && !shca_tm_handle_busy(h, 1));
	e = tm_cqe(SHCA_WC_TM_RECV, IBV_WC_WR_FLUSH_ERR,
		   SHCA_CQE_TM_F_RELEASE, 2);
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && !shca_tm_handle_busy(h, 2));

	/* hostile: TM opcodes and statuses without SHCA_CQE_F_TM */
	for (i = SHCA_WC_TM_ADD; i <= SHCA_WC_TM_NO_TAG; i++) {
		e = tm_cqe((uint8_t)i, 0, SHCA_CQE_TM_F_RELEASE, 3);
		e.flags = 0;
		CHECK(poll1(&f, &e, &wc) == 1);
		CHECK(wc.status == IBV_WC_GENERAL_ERR && wc.wc_flags == 0);
	}
	e = tm_cqe(IBV_WC_RECV, IBV_WC_TM_ERR, 0, 3);
	e.flags = 0;
	CHECK(poll1(&f, &e, &wc) == 1 && wc.status == IBV_WC_GENERAL_ERR);
	e.status = IBV_WC_TM_RNDV_INCOMPLETE;
	CHECK(poll1(&f, &e, &wc) == 1 && wc.status == IBV_WC_GENERAL_ERR);
	CHECK(shca_tm_handle_busy(h, 3));
	/* ... a status past libibverbs' last, an opcode past the TM ones */
	e = tm_cqe(SHCA_WC_TM_RECV, IBV_WC_TM_RNDV_INCOMPLETE + 1, 0, 3);
	CHECK(poll1(&f, &e, &wc) == 1 && wc.status == IBV_WC_GENERAL_ERR);
	e = tm_cqe(SHCA_WC_TM_NO_TAG + 1, 0, 0, 3);
	CHECK(poll1(&f, &e, &wc) == 1 && wc.status == IBV_WC_GENERAL_ERR);
	/* ... TM flags on an ordinary completion are not reported */
	e = tm_cqe(IBV_WC_RECV, 0, SHCA_CQE_TM_F_MATCH | SHCA_CQE_TM_F_SYNC_REQ |
		   SHCA_CQE_TM_F_RELEASE, 3);
	e.flags = SHCA_CQE_F_GRH;
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wc_flags == IBV_WC_GRH &&
	      shca_tm_handle_busy(h, 3));
	/* ... unknown TM flag bits are dropped */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, 0xfff0 | SHCA_CQE_TM_F_MATCH, 3);
	CHECK(poll1(&f, &e, &wc) == 1 && wc.wc_flags == IBV_WC_TM_MATCH);
	/* ... handles out of range, free ones, other SRQs: ignored */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_RELEASE, 0xffff);
	CHECK(poll1(&f, &e, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_RELEASE, FT_TAGS);
	CHECK(poll1(&f, &e, &wc) == 1);
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_RELEASE, 0);
	CHECK(poll1(&f, &e, &wc) == 1);			/* already free */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_RELEASE, 3);
	e.tm_srqn = FT_SRQN + 1;
	CHECK(poll1(&f, &e, &wc) == 1);
	CHECK(shca_tm_handle_busy(h, 3) && h->nfree == 3);
	e.tm_srqn = FT_SRQN;
	CHECK(poll1(&f, &e, &wc) == 1 && h->nfree == FT_TAGS);

	shca_cq_del_tm_srq(&f.cq, &t.srq);
	CHECK(!f.cq.tm_srqs);
	fake_tm_fini(&t);
	tm_cq_fini(&f);
}

/* The extended poll API: the same, plus ibv_wc_read_tm_info(). */
static void test_tm_cqe_ex(void)
{
	static struct fake_tm t;
	static struct tm_cq f;
	struct ibv_cq_ex *cq = &f.cq.vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};
	struct ibv_cq_init_attr_ex ca = {};
	struct ibv_wc_tm_info info;
	struct shca_cqe e;
	uint32_t v;

	ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO |
		      IBV_WC_EX_WITH_CVLAN;
	CHECK(shca_cq_check_attr(&ca) == 0);
	ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	CHECK(shca_cq_check_attr(&ca) == EOPNOTSUPP);

	tm_cq_init(&f);
	fake_tm_init(&t, FT_TAGS);
	shca_cq_add_tm_srq(&f.cq, &t.srq);
	CHECK(shca_tm_handle_get(&t.tm.handles, &v) == 0 && v == 0);
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH |
		   SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE, 0);
	tm_cq_push(&f, &e);
	e = tm_cqe(IBV_WC_RECV, 0, 0, 0);	/* not TM: no TM info */
	e.flags = 0;
	tm_cq_push(&f, &e);
	e = tm_cqe(SHCA_WC_TM_SYNC, 0, 0, 0);
	e.flags = 0;				/* hostile */
	tm_cq_push(&f, &e);

	CHECK(ibv_start_poll(cq, &attr) == 0);
	CHECK(cq->status == IBV_WC_SUCCESS && cq->wr_id == 0x1000);
	CHECK(ibv_wc_read_opcode(cq) == IBV_WC_TM_RECV);
	CHECK(ibv_wc_read_wc_flags(cq) ==
	      (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
	ibv_wc_read_tm_info(cq, &info);
	CHECK(info.tag == 0xfeedface12345678ull && info.priv == 0xc0ffee);
	CHECK(!shca_tm_handle_busy(&t.tm.handles, 0));
	CHECK(ibv_next_poll(cq) == 0);
	CHECK(ibv_wc_read_opcode(cq) == IBV_WC_RECV &&
	      ibv_wc_read_wc_flags(cq) == 0);
	info.tag = 1;
	info.priv = 1;
	ibv_wc_read_tm_info(cq, &info);
	CHECK(info.tag == 0 && info.priv == 0);
	CHECK(ibv_next_poll(cq) == 0 && cq->status == IBV_WC_GENERAL_ERR);
	CHECK(ibv_next_poll(cq) == ENOENT);
	ibv_end_poll(cq);
	CHECK(f.ctl.cons == 3);

	shca_cq_del_tm_srq(&f.cq, &t.srq);
	fake_tm_fini(&t);
	tm_cq_fini(&f);
}

/*
 * A QP's reset keeps its TM completions; a destroyed SRQ's unpolled
 * completions no longer release, not even to a new SRQ of that number.
 */
static void test_tm_cq_clean_forget(void)
{
	static struct fake_tm t, u, w;
	static struct tm_cq f;
	struct shca_cqe e;
	struct ibv_wc wc[4];
	uint32_t v;

	tm_cq_init(&f);
	fake_tm_init(&t, FT_TAGS);
	shca_cq_add_tm_srq(&f.cq, &t.srq);
	CHECK(shca_tm_handle_get(&t.tm.handles, &v) == 0 && v == 0);
	e = tm_cqe(IBV_WC_RECV, 0, 0, 0);
	e.flags = 0;
	e.wr_id = 1;
	tm_cq_push(&f, &e);			/* QP 17, plain: dropped */
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH |
		   SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE, 0);
	e.wr_id = 2;
	tm_cq_push(&f, &e);			/* QP 17, TM: kept */
	e = tm_cqe(IBV_WC_RECV, 0, 0, 0);
	e.flags = 0;
	e.qp_num = 18;
	e.wr_id = 3;
	tm_cq_push(&f, &e);			/* QP 18: kept */
	shca_cq_clean(&f.cq, 17);
	CHECK(f.ctl.prod - f.cq.cons == 2);
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == 2);
	CHECK(wc[0].wr_id == 2 && wc[0].opcode == IBV_WC_TM_RECV &&
	      wc[1].wr_id == 3);
	CHECK(!shca_tm_handle_busy(&t.tm.handles, 0));

	/* the list: add t, u, w; take u out of the middle */
	fake_tm_init(&u, FT_TAGS);
	u.srq.srqn = FT_SRQN + 1;
	fake_tm_init(&w, FT_TAGS);
	w.srq.srqn = FT_SRQN + 2;
	shca_cq_add_tm_srq(&f.cq, &u.srq);
	shca_cq_add_tm_srq(&f.cq, &w.srq);
	CHECK(f.cq.tm_srqs == &w.srq && w.tm.cq_next == &u.srq &&
	      u.tm.cq_next == &t.srq && !t.tm.cq_next);
	shca_cq_del_tm_srq(&f.cq, &u.srq);
	CHECK(f.cq.tm_srqs == &w.srq && w.tm.cq_next == &t.srq &&
	      !u.tm.cq_next);

	/* t goes with a release for handle 0 and one of u's unpolled */
	CHECK(shca_tm_handle_get(&t.tm.handles, &v) == 0);
	e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH |
		   SHCA_CQE_TM_F_RELEASE, (uint16_t)v);
	tm_cq_push(&f, &e);
	e.tm_srqn = FT_SRQN + 2;		/* w's stays */
	tm_cq_push(&f, &e);
	shca_cq_del_tm_srq(&f.cq, &t.srq);
	CHECK(f.cq.tm_srqs == &w.srq && !w.tm.cq_next);
	CHECK(f.cqe[(f.cq.cons) & (TC_ENTRIES - 1)].tm_flags ==
	      SHCA_CQE_TM_F_MATCH);
	CHECK(f.cqe[(f.cq.cons + 1) & (TC_ENTRIES - 1)].tm_flags ==
	      (SHCA_CQE_TM_F_MATCH | SHCA_CQE_TM_F_RELEASE));
	/* a new SRQ with t's number, holding the same handle */
	fake_tm_fini(&t);
	fake_tm_init(&t, FT_TAGS);
	shca_cq_add_tm_srq(&f.cq, &t.srq);
	while (shca_tm_handle_get(&t.tm.handles, &v) == 0)
		;
	CHECK(shca_tm_handle_get(&w.tm.handles, &v) == 0);
	while (shca_tm_handle_get(&w.tm.handles, &v) == 0)
		;
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == 2);
	CHECK(wc[0].opcode == IBV_WC_TM_RECV &&
	      wc[0].wc_flags == IBV_WC_TM_MATCH);
	CHECK(t.tm.handles.nfree == 0);		/* not released */
	CHECK(w.tm.handles.nfree == 1);		/* w's was */

	shca_cq_del_tm_srq(&f.cq, &t.srq);
	shca_cq_del_tm_srq(&f.cq, &w.srq);
	CHECK(!f.cq.tm_srqs);
	fake_tm_fini(&t);
	fake_tm_fini(&u);
	fake_tm_fini(&w);
	tm_cq_fini(&f);
}

/* ------------------------------------------------------------------ */
/* Posting and polling in different threads                            */
/* ------------------------------------------------------------------ */

#define TT_TAGS		8
#define TT_ADDS		20000
#define TT_POSTERS	2

/*
 * The kernel's model: an added tag is held until the next doorbell, which
 * completes it (a one-packet eager match) with a RELEASE completion.  An
 * ADD of a handle it still holds means the provider handed a handle out
 * twice.
 */
struct tt_model {
	struct tm_cq *cq;
	uint8_t held[TT_TAGS];
	uint32_t pending[FT_OPS * 4];
	int npending;
	long adds;
	int violations;
};

static void tt_before(struct fake_tm *f)
{
	struct tt_model *m = f->model;
	struct shca_cqe e;
	int i;

	for (i = 0; i < m->npending; i++) {
		e = tm_cqe(SHCA_WC_TM_RECV, 0, SHCA_CQE_TM_F_MATCH |
			   SHCA_CQE_TM_F_DATA_VALID | SHCA_CQE_TM_F_RELEASE,
			   (uint16_t)m->pending[i]);
		m->held[m->pending[i]] = 0;
		tm_cq_push(m->cq, &e);
	}
	m->npending = 0;
}

static void tt_exec(struct fake_tm *f, struct shca_tm_op_wqe *op)
{
	struct tt_model *m = f->model;

	op->result = 0;
	if (op->opcode != SHCA_OP_TM_ADD)
		return;
	if (op->handle >= TT_TAGS || m->held[op->handle]) {
		m->violations++;
		op->result = IBV_WC_TM_ERR;
		return;
	}
	m->held[op->handle] = 1;
	m->pending[m->npending++] = op->handle;
	m->adds++;
}

static void *tt_poster(void *arg)
{
	struct fake_tm *f = arg;
	struct ibv_ops_wr add, sync, *bad;
	int i = 0, ret;

	while (i < TT_ADDS) {
		add = op_add((uint64_t)i, 0);
		ret = shca_post_srq_ops(&f->srq.vsrq.srq, &add, &bad);
		if (!ret) {
			i++;
			continue;
		}
		CHECK(ret == ENOMEM);
		/* the list is full: let the kernel complete some */
		sync = op_sync(0, 0);
		CHECK(shca_post_srq_ops(&f->srq.vsrq.srq, &sync, &bad) == 0);
		sched_yield();
	}
	return NULL;
}

static long tt_polled;

static void *tt_poller(void *arg)
{
	struct tm_cq *f = arg;
	struct ibv_wc wc[16];
	int n, i;

	while (tt_polled < (long)TT_ADDS * TT_POSTERS) {
		n = shca_poll_cq(&f->cq.vcq.cq, 16, wc);
		CHECK(n >= 0);
		for (i = 0; i < n; i++)
			CHECK(wc[i].status == IBV_WC_SUCCESS &&
			      wc[i].opcode == IBV_WC_TM_RECV);
		tt_polled += n;
		if (!n)
			sched_yield();
	}
	return NULL;
}

static void test_tm_threads(void)
{
	static struct fake_tm t;
	static struct tm_cq f;
	static struct tt_model m;
	pthread_t post[TT_POSTERS], poll;
	struct ibv_ops_wr sync, *bad;
	int i;

	tm_cq_init(&f);
	fake_tm_init(&t, TT_TAGS);
	memset(&m, 0, sizeof(m));
	m.cq = &f;
	t.model = &m;
	t.before = tt_before;
	t.exec = tt_exec;
	shca_cq_add_tm_srq(&f.cq, &t.srq);
	tt_polled = 0;
	CHECK(pthread_create(&poll, NULL, tt_poller, &f) == 0);
	for (i = 0; i < TT_POSTERS; i++)
		CHECK(pthread_create(&post[i], NULL, tt_poster, &t) == 0);
	for (i = 0; i < TT_POSTERS; i++)
		pthread_join(post[i], NULL);
	sync = op_sync(0, 0);				/* the last ones */
	CHECK(shca_post_srq_ops(&t.srq.vsrq.srq, &sync, &bad) == 0);
	pthread_join(poll, NULL);
	CHECK(m.violations == 0);
	CHECK(m.adds == (long)TT_ADDS * TT_POSTERS);
	CHECK(tt_polled == m.adds);
	CHECK(t.tm.handles.nfree == TT_TAGS);
	shca_cq_del_tm_srq(&f.cq, &t.srq);
	fake_tm_fini(&t);
	tm_cq_fini(&f);
}

void test_tm(void)
{
	test_tm_handles();
	test_tm_check_resp();
	test_tm_create();
	test_tm_post_encoding();
	test_tm_post_errors();
	test_tm_results();
	test_tm_doorbell_fail();
	test_tm_cqe();
	test_tm_cqe_ex();
	test_tm_cq_clean_forget();
	test_tm_threads();
}
