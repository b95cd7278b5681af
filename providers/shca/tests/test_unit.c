// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests for the shca provider's internal functions.  The
 * provider sources are compiled into this binary (see CMakeLists.txt), so no
 * RDMA device is needed: rings are backed by a memfd or plain memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test_unit.h"

int failures;

/*
 * SHCA_LIBIBVERBS_FILE is "libibverbs.so.1.14." SHCA_RDMA_CORE_VERSION, the
 * file name of the libibverbs of the tree we were built in.
 */
static void test_version_gate(void)
{
	const char *sys = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1";
	const char *f = SHCA_LIBIBVERBS_FILE;
	char *real = realpath(sys, NULL);
	char p[512];

	CHECK(!strcmp(f, "libibverbs.so.1.14." SHCA_RDMA_CORE_VERSION));
	CHECK(shca_check_libibverbs_path(f) == 0);
	snprintf(p, sizeof(p), "/usr/lib/x86_64-linux-gnu/%s", f);
	CHECK(shca_check_libibverbs_path(p) == 0);
	CHECK(shca_check_libibverbs_path(
		      "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.13.43.0"));
	/* the other supported release, whichever we are not */
	CHECK(shca_check_libibverbs_path(
		      SHCA_RDMA_CORE_VERSION_CODE == 4400 ?
		      "/usr/lib/libibverbs.so.1.14.56.1" :
		      "/usr/lib/libibverbs.so.1.14.44.0"));
	CHECK(shca_check_libibverbs_path("/usr/lib/libibverbs.so.1.14.45.0"));
	CHECK(shca_check_libibverbs_path("/usr/lib/libibverbs.so.1"));
	snprintf(p, sizeof(p), "/x/%s.bak", f);
	CHECK(shca_check_libibverbs_path(p));
	snprintf(p, sizeof(p), "/x/my%s", f);
	CHECK(shca_check_libibverbs_path(p));
	snprintf(p, sizeof(p), "/%s/x", f);
	CHECK(shca_check_libibverbs_path(p));
	CHECK(shca_check_libibverbs_path(""));
	CHECK(shca_check_libibverbs_path(NULL));
	/* This machine's libibverbs passes exactly when it is our release. */
	CHECK(real);
	if (real)
		CHECK((shca_check_libibverbs_path(real) == 0) ==
		      (strcmp(strrchr(real, '/') + 1, f) == 0));
	free(real);
}

static void test_parse_abi_attr(void)
{
	CHECK(shca_parse_abi_attr("1\n", 2) == 1);
	CHECK(shca_parse_abi_attr("1", 1) == 1);
	CHECK(shca_parse_abi_attr("12\n", 3) == 12);
	CHECK(shca_parse_abi_attr("", 0) == -1);
	CHECK(shca_parse_abi_attr("\n", 1) == -1);
	CHECK(shca_parse_abi_attr(" 1\n", 3) == -1);
	CHECK(shca_parse_abi_attr("1x\n", 3) == -1);
	CHECK(shca_parse_abi_attr("-1\n", 3) == -1);
	CHECK(shca_parse_abi_attr("1\n\n", 3) == -1);
	CHECK(shca_parse_abi_attr("99999999999\n", 12) == -1);
}

static void write_attr(const char *dir, const char *val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, SHCA_SYSFS_ABI_ATTR);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(val, f);
	fclose(f);
}

static void test_match_device(void)
{
	static struct verbs_sysfs_dev dev;
	char dir[] = "/tmp/shca-sysfs-XXXXXX";
	char path[512];
	char want[16];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(dev.ibdev_path, sizeof(dev.ibdev_path), "%s", dir);
	snprintf(dev.ibdev_name, sizeof(dev.ibdev_name), "shca0");

	CHECK(!shca_match_device(&dev));	/* no attribute: not ours */
	snprintf(want, sizeof(want), "%d\n", SHCA_UVERBS_ABI_VERSION);
	write_attr(dir, want);
	CHECK(shca_match_device(&dev));
	snprintf(want, sizeof(want), "%d\n", SHCA_UVERBS_ABI_VERSION + 1);
	write_attr(dir, want);
	CHECK(!shca_match_device(&dev));
	write_attr(dir, "garbage\n");
	CHECK(!shca_match_device(&dev));

	snprintf(path, sizeof(path), "%s/%s", dir, SHCA_SYSFS_ABI_ATTR);
	unlink(path);
	rmdir(dir);
}

/* A valid description: ctl at 0, 8 entries of 64 bytes from offset 4096. */
static struct shca_ring_info good_info(long page)
{
	struct shca_ring_info info = {
		.mmap_key = 2 * (uint64_t)page,
		.mmap_len = 3 * (uint64_t)page,
		.ctl_offset = 0,
		.entries_offset = (uint32_t)page,
		.entries = 8,
		.entry_shift = 6,
		.chunk_shift = (uint32_t)__builtin_ctzl((unsigned long)page),
	};
	return info;
}

static void test_ring_check(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct shca_ring_info i;

	i = good_info(page);
	CHECK(shca_ring_check(&i, 64, page) == 0);
	CHECK(shca_ring_check(&i, 65, page) == EINVAL);	/* stride too small */
	i = good_info(page); i.entries = 0;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entries = 6;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entries = 1u << 31;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entries = 256;		/* past mmap_len */
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entries_offset = 4100;	/* misaligned */
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entries_offset = 0;	/* overlaps ctl */
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.ctl_offset = (uint32_t)(3 * page - 64);
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);	/* ctl past end */
	i = good_info(page); i.ctl_offset = 8;		/* misaligned ctl */
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.chunk_shift = 4;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.chunk_shift = 63;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.entry_shift = 40;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.mmap_key += 8;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.mmap_key = UINT64_MAX & ~(uint64_t)(page - 1);
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
	i = good_info(page); i.mmap_len = 0;
	CHECK(shca_ring_check(&i, 64, page) == EINVAL);
}

/* Chunks land contiguously and shared: the memfd plays the uverbs fd. */
static void test_ring_map(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct shca_ring_info info = good_info(page);
	size_t flen = info.mmap_key + info.mmap_len;
	struct shca_ring ring;
	uint8_t *buf, *guard;
	uint32_t word;
	int fd, pfd[2];
	size_t i;

	fd = memfd_create("shca-ring", 0);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)flen) == 0);
	buf = malloc(flen);
	for (i = 0; i < flen; i++)
		buf[i] = (uint8_t)(i * 7 + i / 4096);
	CHECK(pwrite(fd, buf, flen, 0) == (ssize_t)flen);

	CHECK(shca_ring_map(&ring, &info, 64, fd) == 0);
	CHECK(ring.map != NULL && ring.mask == 7 && ring.entry_shift == 6);
	CHECK(memcmp(ring.map, buf + info.mmap_key, info.mmap_len) == 0);
	CHECK((uint8_t *)ring.ctl == (uint8_t *)ring.map + info.ctl_offset);
	CHECK(ring.entries == (uint8_t *)ring.map + info.entries_offset);
	ring.ctl->cons = 0x11223344;
	CHECK(pread(fd, &word, 4, (off_t)(info.mmap_key + 64)) == 4 &&
	      word == 0x11223344);
	memcpy(buf + info.mmap_key + 64, &word, 4);
	shca_ring_unmap(&ring);
	CHECK(ring.map == NULL);

	/*
	 * The next ring goes right under the last one mapped; with the
	 * page there taken it goes over a reservation instead.  Either way
	 * it is mapped whole.
	 */
	CHECK(shca_ring_map(&ring, &info, 64, fd) == 0);
	guard = (uint8_t *)ring.map - page;
	shca_ring_unmap(&ring);
	CHECK(mmap(guard, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_FIXED, -1, 0) == guard);
	CHECK(shca_ring_map(&ring, &info, 64, fd) == 0);
	CHECK(memcmp(ring.map, buf + info.mmap_key, info.mmap_len) == 0);
	shca_ring_unmap(&ring);
	CHECK(munmap(guard, page) == 0);
	CHECK(shca_ring_map(&ring, &info, 64, fd) == 0);
	CHECK(memcmp(ring.map, buf + info.mmap_key, info.mmap_len) == 0);
	shca_ring_unmap(&ring);

	/* a chunk mmap that fails leaves nothing mapped */
	CHECK(pipe(pfd) == 0);
	CHECK(shca_ring_map(&ring, &info, 64, pfd[0]) != 0 && ring.map == NULL);
	close(pfd[0]);
	close(pfd[1]);
	info = good_info(page);
	info.entries = 3;			/* rejected before mmap */
	CHECK(shca_ring_map(&ring, &info, 64, fd) == EINVAL);
	free(buf);
	close(fd);
}

/* A CQ whose ring is plain memory: 4 entries of 64 bytes. */
struct fake_cq {
	struct shca_cq cq;
	struct shca_ring_ctl ctl;
	struct shca_cqe cqe[4];
};

static void fake_cq_init(struct fake_cq *f)
{
	memset(f, 0, sizeof(*f));
	pthread_spin_init(&f->cq.lock, PTHREAD_PROCESS_PRIVATE);
	f->cq.ring.ctl = &f->ctl;
	f->cq.ring.entries = (uint8_t *)f->cqe;
	f->cq.ring.mask = 3;
	f->cq.ring.entry_shift = 6;
	shca_cq_set_ex_ops(&f->cq.vcq.cq_ex);
}

static void fake_cq_push(struct fake_cq *f, uint64_t wr_id, uint8_t status,
			 uint8_t opcode, uint8_t flags)
{
	struct shca_cqe *e = &f->cqe[f->ctl.prod & 3];

	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->status = status;
	e->opcode = opcode;
	e->flags = flags;
	e->byte_len = 100 + (uint32_t)wr_id;
	e->qp_num = 17;
	e->imm_data = 0xabcd;
	f->ctl.prod++;
}

/*
 * ibv_req_notify_cq() with a kernel that reads the arm word: no command,
 * the request ORed into ctl->arm (NEXT stays when SOLICITED follows).
 */
static void test_req_notify_cq(void)
{
	static struct fake_cq f;
	struct ibv_cq *cq = &f.cq.vcq.cq;

	fake_cq_init(&f);
	f.cq.arm_word = true;
	CHECK(shca_req_notify_cq(cq, 0) == 0);
	CHECK(f.ctl.arm == SHCA_CQ_ARM_NEXT);
	CHECK(shca_req_notify_cq(cq, 1) == 0);
	CHECK(f.ctl.arm == (SHCA_CQ_ARM_NEXT | SHCA_CQ_ARM_SOLICITED));
	f.ctl.arm = 0;		/* the kernel took it */
	CHECK(shca_req_notify_cq(cq, 1) == 0);
	CHECK(f.ctl.arm == SHCA_CQ_ARM_SOLICITED);
	CHECK(f.ctl.prod == 0 && f.ctl.cons == 0 && f.ctl.flags == 0);
	pthread_spin_destroy(&f.cq.lock);
}

static void test_poll_cq(void)
{
	static struct fake_cq f;
	struct ibv_wc wc[4];

	static_assert(sizeof(struct shca_cqe) == 64, "cqe size");
	fake_cq_init(&f);
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == 0);
	fake_cq_push(&f, 1, IBV_WC_SUCCESS, IBV_WC_RECV, SHCA_CQE_F_IMM);
	fake_cq_push(&f, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0);
	fake_cq_push(&f, 3, 200, IBV_WC_SEND, 0);	  /* status out of range */
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 2, wc) == 2);
	CHECK(f.ctl.cons == 2);
	CHECK(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 101 &&
	      wc[0].qp_num == 17 && wc[0].wc_flags == IBV_WC_WITH_IMM &&
	      wc[0].imm_data == 0xabcd);
	CHECK(wc[1].wr_id == 2 && wc[1].opcode == IBV_WC_RDMA_WRITE &&
	      wc[1].wc_flags == 0);
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 3 && wc[0].status == IBV_WC_GENERAL_ERR);
	fake_cq_push(&f, 4, IBV_WC_SUCCESS, 77, 0);	  /* unknown opcode */
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 4 && wc[0].status == IBV_WC_GENERAL_ERR);
	CHECK(f.ctl.cons == 4);

	f.ctl.prod = f.ctl.cons + 5;			  /* impossible prod */
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == -EIO);
	f.ctl.prod = f.ctl.cons;
	f.ctl.flags = SHCA_RING_F_ERROR;		  /* overflowed */
	CHECK(shca_poll_cq(&f.cq.vcq.cq, 4, wc) == -EIO);
	pthread_spin_destroy(&f.cq.lock);
}

static void test_poll_cq_ex(void)
{
	static struct fake_cq f;
	struct ibv_cq_ex *cq = &f.cq.vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};

	fake_cq_init(&f);
	CHECK(ibv_start_poll(cq, &attr) == ENOENT);
	fake_cq_push(&f, 10, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	fake_cq_push(&f, 11, IBV_WC_SUCCESS, IBV_WC_RECV, SHCA_CQE_F_GRH);
	CHECK(ibv_start_poll(cq, &attr) == 0);
	CHECK(cq->wr_id == 10 && cq->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_opcode(cq) == IBV_WC_SEND);
	CHECK(ibv_wc_read_byte_len(cq) == 110);
	CHECK(ibv_next_poll(cq) == 0);
	CHECK(cq->wr_id == 11 && ibv_wc_read_opcode(cq) == IBV_WC_RECV);
	CHECK(ibv_wc_read_wc_flags(cq) == IBV_WC_GRH);
	CHECK(ibv_wc_read_qp_num(cq) == 17);
	CHECK(ibv_next_poll(cq) == ENOENT);
	ibv_end_poll(cq);
	CHECK(f.ctl.cons == 2 && f.cq.cons == 2);

	/* end_poll consumes the entry returned last, exactly once */
	fake_cq_push(&f, 12, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	fake_cq_push(&f, 13, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	CHECK(ibv_start_poll(cq, &attr) == 0 && cq->wr_id == 12);
	ibv_end_poll(cq);
	CHECK(f.ctl.cons == 3);
	CHECK(ibv_start_poll(cq, &attr) == 0 && cq->wr_id == 13);
	ibv_end_poll(cq);
	CHECK(f.ctl.cons == 4);

	/* a stripped C-VLAN reads back its TCI; without the flag, 0 */
	fake_cq_push(&f, 14, IBV_WC_SUCCESS, IBV_WC_RECV, SHCA_CQE_F_CVLAN);
	f.cqe[(f.ctl.prod - 1) & 3].vlan_id = 0xa07b;
	fake_cq_push(&f, 15, IBV_WC_SUCCESS, IBV_WC_RECV, 0);
	f.cqe[(f.ctl.prod - 1) & 3].vlan_id = 0xa07b;
	CHECK(ibv_start_poll(cq, &attr) == 0 && cq->wr_id == 14);
	CHECK(ibv_wc_read_cvlan(cq) == 0xa07b);
	CHECK(ibv_wc_read_wc_flags(cq) == 0);
	CHECK(ibv_next_poll(cq) == 0 && cq->wr_id == 15);
	CHECK(ibv_wc_read_cvlan(cq) == 0);
	ibv_end_poll(cq);
	CHECK(f.ctl.cons == 6);
	attr.comp_mask = 1;
	CHECK(ibv_start_poll(cq, &attr) == EINVAL);
	pthread_spin_destroy(&f.cq.lock);
}

/* ------------------------------------------------------------------ */
/* Send WQEs: ibv_post_send and the ibv_qp_ex API                      */
/* ------------------------------------------------------------------ */

#define FQ_ENTRIES	8
#define FQ_SHIFT	8
#define FQ_MAX_SGE	4
#define FQ_MAX_INLINE	((1u << FQ_SHIFT) - sizeof(struct shca_send_wqe))

/* A QP whose SQ is plain memory; the "engine" is always active, so
 * publishing never rings the (absent) doorbell.
 */
struct fake_qp {
	struct shca_qp qp;
	struct shca_ring_ctl ctl;
	uint8_t ring[FQ_ENTRIES][1u << FQ_SHIFT] __attribute__((aligned(64)));
};

static void fake_qp_init(struct fake_qp *f, enum ibv_qp_type type,
			 uint64_t send_ops)
{
	memset(f, 0, sizeof(*f));
	pthread_spin_init(&f->qp.sq.lock, PTHREAD_PROCESS_PRIVATE);
	f->qp.vqp.qp.qp_type = type;
	f->qp.vqp.qp.state = IBV_QPS_RTS;
	f->qp.sq.ring.map = f->ring;
	f->qp.sq.ring.ctl = &f->ctl;
	f->qp.sq.ring.entries = &f->ring[0][0];
	f->qp.sq.ring.mask = FQ_ENTRIES - 1;
	f->qp.sq.ring.entry_shift = FQ_SHIFT;
	f->qp.sq.max_sge = FQ_MAX_SGE;
	f->qp.max_inline_data = FQ_MAX_INLINE;
	f->ctl.flags = SHCA_RING_F_ENGINE_ACTIVE;
	if (send_ops)
		shca_qp_ex_init(&f->qp, send_ops);
}

static struct shca_send_wqe *fq_wqe(struct fake_qp *f, uint32_t idx)
{
	return (struct shca_send_wqe *)f->ring[idx & (FQ_ENTRIES - 1)];
}

static struct shca_sge *fq_sge(struct fake_qp *f, uint32_t idx)
{
	return (struct shca_sge *)(fq_wqe(f, idx) + 1);
}

static uint8_t inl_buf[FQ_MAX_INLINE + 1];
static struct shca_ah fake_ah = { .ah_handle = 0x5a5a };
static const struct ibv_sge two_sges[2] = {
	{ .addr = 0x1000, .length = 100, .lkey = 0x11 },
	{ .addr = 0x2000, .length = 200, .lkey = 0x22 },
};

/* One work request of every opcode, each built by both APIs. */
struct wqe_case {
	enum ibv_qp_type type;
	struct ibv_send_wr wr;
	struct ibv_ah *ah;
	bool inl;
};

static const struct wqe_case wqe_cases[] = {
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 1, .opcode = IBV_WR_SEND,
	  .send_flags = IBV_SEND_SIGNALED, .num_sge = 1 } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 2, .opcode = IBV_WR_SEND_WITH_IMM,
	  .imm_data = 0x12345678, .send_flags = IBV_SEND_SOLICITED,
	  .num_sge = 2 } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 3, .opcode = IBV_WR_SEND_WITH_INV,
	  .invalidate_rkey = 0xabcd, .num_sge = 1 } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 4, .opcode = IBV_WR_RDMA_WRITE,
	  .send_flags = IBV_SEND_FENCE, .num_sge = 2, .imm_data = 0xdead,
	  .wr.rdma = { .remote_addr = 0xfeed0000, .rkey = 0x77 } } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 5, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	  .imm_data = 0x9abc, .num_sge = 1,
	  .wr.rdma = { .remote_addr = 0xfeed1000, .rkey = 0x78 } } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 6, .opcode = IBV_WR_RDMA_READ, .num_sge = 1,
	  .wr.rdma = { .remote_addr = 0xfeed2000, .rkey = 0x79 } } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 7, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
	  .num_sge = 1, .wr.atomic = { .remote_addr = 0xfeed3000,
	  .compare_add = 11, .swap = 22, .rkey = 0x7a } } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 8, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
	  .num_sge = 1, .wr.atomic = { .remote_addr = 0xfeed4000,
	  .compare_add = 33, .rkey = 0x7b } } },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 9, .opcode = IBV_WR_SEND,
	  .send_flags = IBV_SEND_INLINE, .num_sge = 2 }, .inl = true },
	{ .type = IBV_QPT_UC, .wr = { .wr_id = 10, .opcode = IBV_WR_RDMA_WRITE,
	  .send_flags = IBV_SEND_INLINE, .num_sge = 1,
	  .wr.rdma = { .remote_addr = 0xbeef, .rkey = 0x44 } }, .inl = true },
	{ .type = IBV_QPT_UC, .wr = { .wr_id = 11, .opcode = IBV_WR_SEND_WITH_IMM,
	  .imm_data = 0x1, .num_sge = 1 } },
	{ .type = IBV_QPT_UD, .wr = { .wr_id = 12, .opcode = IBV_WR_SEND, .num_sge = 1,
	  .wr.ud = { .remote_qpn = 0xffffff, .remote_qkey = 0x11111111 } },
	  .ah = &fake_ah.ibv_ah },
	{ .type = IBV_QPT_UD, .wr = { .wr_id = 13, .opcode = IBV_WR_SEND_WITH_IMM,
	  .imm_data = 0x42, .send_flags = IBV_SEND_INLINE, .num_sge = 2,
	  .wr.ud = { .remote_qpn = 7, .remote_qkey = 0x22 } },
	  .ah = &fake_ah.ibv_ah, .inl = true },
	/* XRC_SEND carries the target SRQ; no other type does */
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 14, .opcode = IBV_WR_SEND,
	  .num_sge = 2, .qp_type.xrc.remote_srqn = 0xabcdef } },
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 15,
	  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = 0x77, .num_sge = 1,
	  .qp_type.xrc.remote_srqn = SHCA_XRC_SRQN_MAX,
	  .wr.rdma = { .remote_addr = 0xfeed5000, .rkey = 0x7c } } },
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 16,
	  .opcode = IBV_WR_RDMA_READ, .num_sge = 1, .qp_type.xrc.remote_srqn = 1,
	  .wr.rdma = { .remote_addr = 0xfeed6000, .rkey = 0x7d } } },
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 17,
	  .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .num_sge = 1,
	  .qp_type.xrc.remote_srqn = 0x10,
	  .wr.atomic = { .remote_addr = 0xfeed7000, .compare_add = 5,
	  .swap = 6, .rkey = 0x7e } } },
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 18,
	  .opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = 0x99,
	  .num_sge = 1, .qp_type.xrc.remote_srqn = 0x20 } },
	{ .type = IBV_QPT_XRC_SEND, .wr = { .wr_id = 19, .opcode = IBV_WR_SEND,
	  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED, .num_sge = 2,
	  .qp_type.xrc.remote_srqn = 0x123456 }, .inl = true },
	{ .type = IBV_QPT_RC, .wr = { .wr_id = 20, .opcode = IBV_WR_SEND,
	  .num_sge = 1, .qp_type.xrc.remote_srqn = 0x42 } },
};

/* The same request through the ibv_wr_*() calls. */
static void post_ex(struct ibv_qp_ex *qpx, const struct ibv_send_wr *wr,
		    struct ibv_ah *ah, bool inl)
{
	const struct ibv_sge *sg = wr->sg_list;

	qpx->wr_id = wr->wr_id;
	qpx->wr_flags = wr->send_flags & ~IBV_SEND_INLINE;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		ibv_wr_send(qpx);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(qpx, wr->imm_data);
		break;
	case IBV_WR_SEND_WITH_INV:
		ibv_wr_send_inv(qpx, wr->invalidate_rkey);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(qpx, wr->wr.rdma.rkey,
				      wr->wr.rdma.remote_addr, wr->imm_data);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(qpx, wr->wr.atomic.rkey,
				      wr->wr.atomic.remote_addr,
				      wr->wr.atomic.compare_add,
				      wr->wr.atomic.swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(qpx, wr->wr.atomic.rkey,
					wr->wr.atomic.remote_addr,
					wr->wr.atomic.compare_add);
		break;
	default:
		CHECK(0);
	}
	if (ah)
		ibv_wr_set_ud_addr(qpx, ah, wr->wr.ud.remote_qpn,
				   wr->wr.ud.remote_qkey);
	if (qpx->qp_base.qp_type == IBV_QPT_XRC_SEND)
		ibv_wr_set_xrc_srqn(qpx, wr->qp_type.xrc.remote_srqn);
	if (inl) {
		struct ibv_data_buf b[2] = {
			{ (void *)(uintptr_t)sg[0].addr, sg[0].length },
			{ (void *)(uintptr_t)sg[1].addr, sg[1].length },
		};

		if (wr->num_sge == 1)
			ibv_wr_set_inline_data(qpx, b[0].addr, b[0].length);
		else
			ibv_wr_set_inline_data_list(qpx, 2, b);
	} else if (wr->num_sge == 1) {
		ibv_wr_set_sge(qpx, sg[0].lkey, sg[0].addr, sg[0].length);
	} else {
		ibv_wr_set_sge_list(qpx, (size_t)wr->num_sge, sg);
	}
}

/* Field-by-field expectations for one WQE (beyond the byte compare). */
static void check_wqe_fields(struct fake_qp *f, const struct wqe_case *c,
			     const struct ibv_sge *sg)
{
	const struct ibv_send_wr *wr = &c->wr;
	struct shca_send_wqe *w = fq_wqe(f, 0);
	uint8_t fl = 0;

	CHECK(w->wr_id == wr->wr_id && w->opcode == (uint8_t)wr->opcode);
	fl |= wr->send_flags & IBV_SEND_SIGNALED ? SHCA_WQE_F_SIGNALED : 0;
	fl |= wr->send_flags & IBV_SEND_SOLICITED ? SHCA_WQE_F_SOLICITED : 0;
	fl |= wr->send_flags & IBV_SEND_FENCE ? SHCA_WQE_F_FENCE : 0;
	fl |= c->inl ? SHCA_WQE_F_INLINE : 0;
	CHECK(w->flags == fl && w->reserved_88 == 0);
	CHECK(w->xrc_remote_srqn == (c->type == IBV_QPT_XRC_SEND ?
				     wr->qp_type.xrc.remote_srqn : 0));
	if (wr->opcode == IBV_WR_SEND_WITH_INV)
		CHECK(w->ex == wr->invalidate_rkey);
	else if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
		 wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		CHECK(w->ex == (uint32_t)wr->imm_data);
	else
		CHECK(w->ex == 0);
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		CHECK(w->atomic.remote_addr == wr->wr.atomic.remote_addr &&
		      w->atomic.compare_add == wr->wr.atomic.compare_add &&
		      w->atomic.swap == wr->wr.atomic.swap &&
		      w->atomic.rkey == wr->wr.atomic.rkey);
	else if (c->type == IBV_QPT_UD)
		CHECK(w->ud.ah_handle == 0x5a5a &&
		      w->ud.remote_qpn == wr->wr.ud.remote_qpn &&
		      w->ud.remote_qkey == wr->wr.ud.remote_qkey);
	else if (wr->opcode <= IBV_WR_RDMA_READ &&
		 wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM)
		CHECK(w->rdma.remote_addr == wr->wr.rdma.remote_addr &&
		      w->rdma.rkey == wr->wr.rdma.rkey);
	if (c->inl) {
		uint32_t n = sg[0].length + (wr->num_sge > 1 ? sg[1].length : 0);

		CHECK(w->num_sge == 0 && w->inline_len == n);
		CHECK(!memcmp(w + 1, inl_buf, n));
	} else {
		CHECK(w->num_sge == wr->num_sge && w->inline_len == 0);
		CHECK(!memcmp(fq_sge(f, 0), two_sges,
			      (size_t)wr->num_sge * sizeof(struct shca_sge)));
	}
}

static void test_wqe_opcodes(void)
{
	static struct fake_qp a, b;
	const struct ibv_sge inl_sges[2] = {
		{ .addr = (uintptr_t)inl_buf, .length = 10 },
		{ .addr = (uintptr_t)(inl_buf + 10), .length = 30 },
	};
	struct ibv_send_wr *bad;
	size_t i;

	for (i = 0; i < sizeof(inl_buf); i++)
		inl_buf[i] = (uint8_t)(i * 13 + 1);
	for (i = 0; i < sizeof(wqe_cases) / sizeof(wqe_cases[0]); i++) {
		const struct wqe_case *c = &wqe_cases[i];
		struct ibv_send_wr wr = c->wr;

		wr.sg_list = (struct ibv_sge *)(c->inl ? inl_sges : two_sges);
		if (c->ah)	/* wr.wr is a union */
			wr.wr.ud.ah = c->ah;
		fake_qp_init(&a, c->type, 0);
		fake_qp_init(&b, c->type, c->type == IBV_QPT_RC ||
			     c->type == IBV_QPT_XRC_SEND ?
			     0x27f | IBV_QP_EX_WITH_SEND_WITH_INV :
			     c->type == IBV_QPT_UC ? 0xf : 0xc);
		CHECK(shca_post_send(&a.qp.vqp.qp, &wr, &bad) == 0);
		CHECK(a.ctl.prod == 1 && a.qp.sq.prod == 1);
		ibv_wr_start(&b.qp.vqp.qp_ex);
		post_ex(&b.qp.vqp.qp_ex, &wr, c->ah, c->inl);
		CHECK(b.ctl.prod == 0);		/* nothing before complete */
		CHECK(ibv_wr_complete(&b.qp.vqp.qp_ex) == 0);
		CHECK(b.ctl.prod == 1 && b.qp.sq.prod == 1);
		if (memcmp(a.ring[0], b.ring[0], sizeof(a.ring[0]))) {
			fprintf(stderr, "case %zu: WQEs differ\n", i);
			failures++;
		}
		check_wqe_fields(&a, c, c->inl ? inl_sges : two_sges);
		pthread_spin_destroy(&a.qp.sq.lock);
		pthread_spin_destroy(&b.qp.sq.lock);
	}
}

static void test_qp_ex_check(void)
{
	CHECK(shca_qp_ex_check(IBV_QPT_RC, 0x27f) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, 0xf) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, 0xc) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_RC, IBV_QP_EX_WITH_BIND_MW) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_LOCAL_INV) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_TSO) == EOPNOTSUPP);
	CHECK(shca_qp_ex_check(IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE) ==
	      EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE) ==
	      EINVAL);
#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
	/* FLUSH: RC only (the kernel's support is checked at creation) */
	CHECK(shca_qp_ex_check(IBV_QPT_RC, IBV_QP_EX_WITH_FLUSH) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_FLUSH) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_FLUSH) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_FLUSH) ==
	      EINVAL);
#else
	CHECK(shca_qp_ex_check(IBV_QPT_RC, 1u << 11) == EOPNOTSUPP);
#endif
	CHECK(shca_qp_ex_check(IBV_QPT_RC, 1ull << 40) == EOPNOTSUPP);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_READ) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ) == EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV) ==
	      EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) ==
	      EINVAL);
	/* XRC initiators: what RC has but ATOMIC WRITE; targets: nothing */
	CHECK(shca_qp_ex_check(IBV_QPT_XRC_SEND, 0x3ff) == 0);
	CHECK(shca_qp_ex_check(IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_ATOMIC_WRITE) ==
	      EINVAL);
	CHECK(shca_qp_ex_check(IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_TSO) ==
	      EOPNOTSUPP);
	CHECK(shca_qp_ex_check(IBV_QPT_XRC_RECV, IBV_QP_EX_WITH_SEND) ==
	      EINVAL);
}

/* Batches: publish together, abort and errors publish nothing. */
static void test_qp_ex_batch(void)
{
	static struct fake_qp f;
	struct ibv_qp_ex *qpx = &f.qp.vqp.qp_ex;
	struct ibv_sge big[FQ_MAX_SGE + 1] = {};
	int i;

	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
		     IBV_QP_EX_WITH_RDMA_WRITE);
	CHECK(ibv_qp_to_qp_ex(&f.qp.vqp.qp) == qpx);

	ibv_wr_start(qpx);
	for (i = 0; i < 3; i++) {
		qpx->wr_id = 100 + i;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 0x10, 4);
	}
	CHECK(f.ctl.prod == 0);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 3);
	CHECK(fq_wqe(&f, 2)->wr_id == 102);

	/* abort: nothing published, the slots are reused */
	ibv_wr_start(qpx);
	qpx->wr_id = 200;
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	CHECK(f.ctl.prod == 3 && f.qp.sq.prod == 3);
	ibv_wr_start(qpx);
	qpx->wr_id = 201;
	ibv_wr_rdma_write(qpx, 5, 0x100);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 4);
	CHECK(fq_wqe(&f, 3)->wr_id == 201);

	/* an opcode not granted at creation, even after a good WQE */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_rdma_read(qpx, 1, 2);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 4 &&
	      f.qp.sq.prod == 4);

	/* too many SGEs; a setter with no WQE; inline too long */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, FQ_MAX_SGE + 1, big);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 4);
	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	CHECK(ibv_wr_complete(qpx) == EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, inl_buf, FQ_MAX_INLINE + 1);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 4);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, inl_buf, FQ_MAX_INLINE);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 5);
	CHECK(fq_wqe(&f, 4)->inline_len == FQ_MAX_INLINE);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, &fake_ah.ibv_ah, 1, 1);	/* not UD */
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 5);

	/* a full ring fails the whole batch */
	ibv_wr_start(qpx);
	for (i = 0; i < FQ_ENTRIES; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 0x10, 4);
	}
	CHECK(ibv_wr_complete(qpx) == ENOMEM && f.ctl.prod == 5);
	f.ctl.cons = 5;					/* engine caught up */
	ibv_wr_start(qpx);
	for (i = 0; i < FQ_ENTRIES; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 0x10, 4);
	}
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 5 + FQ_ENTRIES);
	pthread_spin_destroy(&f.qp.sq.lock);
}

/* ibv_post_send: transport checks of the RC/UC/UD opcodes. */
#define W0 (*(struct shca_send_wqe *)f.ring[0])
static void test_post_send_checks(void)
{
	static struct fake_qp f;
	struct ibv_sge sge = { .addr = 0x10, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_send_wr wr2;

	fake_qp_init(&f, IBV_QPT_UC, 0);
	wr.opcode = IBV_WR_RDMA_READ;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL && bad == &wr);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);
	CHECK(f.ctl.prod == 0);
	/* type 1 windows are bound with ibv_bind_mw only */
	{
		struct ibv_mw mw1 = { .type = IBV_MW_TYPE_1, .rkey = 0x80000105 };
		struct ibv_send_wr bw = { .opcode = IBV_WR_BIND_MW };

		bw.bind_mw.mw = &mw1;
		bw.bind_mw.rkey = 0x80000106;
		CHECK(shca_post_send(&f.qp.vqp.qp, &bw, &bad) == EINVAL);
		CHECK(f.ctl.prod == 0);
		mw1.type = IBV_MW_TYPE_2;
		bw.bind_mw.bind_info.addr = 0x1000;
		bw.bind_mw.bind_info.length = 64;
		bw.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		CHECK(shca_post_send(&f.qp.vqp.qp, &bw, &bad) == 0);
		CHECK(f.ctl.prod == 1);
		CHECK(W0.opcode == SHCA_OP_BIND_MW && W0.num_sge == 0);
		CHECK(W0.bind.rkey == 0x80000106 &&
		      W0.bind.mw_rkey == 0x80000105 &&
		      W0.bind.addr == 0x1000 &&
		      W0.bind.length == 64 && W0.bind.mr_lkey == 0 &&
		      W0.bind.access == IBV_ACCESS_REMOTE_WRITE);
	}
	/* LOCAL_INV carries only the key, never the SGEs */
	fake_qp_init(&f, IBV_QPT_UC, 0);
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x1234;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == 0);
	CHECK(f.ctl.prod == 1 && W0.ex == 0x1234 && W0.num_sge == 0);
	fake_qp_init(&f, IBV_QPT_UD, 0);
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);

	/* a chain stops at the first bad WR; the good ones are posted */
	fake_qp_init(&f, IBV_QPT_UD, 0);
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = &fake_ah.ibv_ah;
	wr2 = wr;
	wr2.opcode = IBV_WR_RDMA_WRITE;
	wr.next = &wr2;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL && bad == &wr2);
	CHECK(f.ctl.prod == 1);
	wr.next = NULL;
	wr.wr.ud.ah = NULL;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);
	wr.wr.ud.ah = &fake_ah.ibv_ah;
	wr.num_sge = FQ_MAX_SGE + 1;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);
	wr.num_sge = 1;
	sge.length = FQ_MAX_INLINE + 1;
	sge.addr = (uintptr_t)inl_buf;
	wr.send_flags = IBV_SEND_INLINE;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL);
	CHECK(f.ctl.prod == 1);
	pthread_spin_destroy(&f.qp.sq.lock);
}

/* ibv_wr_atomic_write: 8 inline bytes; no SGE or inline may follow. */
static void test_atomic_write(void)
{
	static const uint8_t val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static struct fake_qp f;
	struct ibv_qp_ex *qpx = &f.qp.vqp.qp_ex;
	struct shca_send_wqe *wqe;

	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	ibv_wr_start(qpx);
	qpx->wr_id = 77;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, 0x55, 0xfeed0008, val);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 1);
	wqe = fq_wqe(&f, 0);
	CHECK(wqe->opcode == SHCA_OP_ATOMIC_WRITE && wqe->wr_id == 77);
	CHECK(wqe->flags == (SHCA_WQE_F_SIGNALED | SHCA_WQE_F_INLINE));
	CHECK(wqe->inline_len == SHCA_ATOMIC_WRITE_LEN && wqe->num_sge == 0);
	CHECK(wqe->rdma.remote_addr == 0xfeed0008 && wqe->rdma.rkey == 0x55);
	CHECK(!memcmp(wqe + 1, val, sizeof(val)));

	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, 0x55, 0xfeed0008, val);
	ibv_wr_set_sge(qpx, 1, 0x10, 8);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 1);
	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, 0x55, 0xfeed0008, val);
	ibv_wr_set_inline_data(qpx, (void *)val, sizeof(val));
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 1);
	pthread_spin_destroy(&f.qp.sq.lock);

	/* not granted at creation: EINVAL */
	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, 0x55, 0xfeed0008, val);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 0);
	pthread_spin_destroy(&f.qp.sq.lock);
}

#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
/* ibv_wr_flush: the FLUSH fields, no data; no SGE or inline may follow. */
static void test_flush(void)
{
	static const uint8_t val[8];
	static struct fake_qp f;
	struct ibv_qp_ex *qpx = &f.qp.vqp.qp_ex;
	struct shca_send_wqe *wqe;

	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_FLUSH);
	ibv_wr_start(qpx);
	qpx->wr_id = 78;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qpx, 0x66, 0xfeed0010, 4096, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ibv_wr_flush(qpx, 0x67, 0xfeed0020, (size_t)1 << 33,
		     IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT, IBV_FLUSH_MR);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 2);
	wqe = fq_wqe(&f, 0);
	CHECK(wqe->opcode == SHCA_OP_FLUSH && wqe->wr_id == 78);
	CHECK(wqe->flags == SHCA_WQE_F_SIGNALED);
	CHECK(wqe->num_sge == 0 && wqe->inline_len == 0);
	CHECK(wqe->flush.remote_addr == 0xfeed0010 && wqe->flush.rkey == 0x66);
	CHECK(wqe->flush.type == SHCA_FLUSH_GLOBAL &&
	      wqe->flush.level == SHCA_FLUSH_RANGE &&
	      wqe->flush.length == 4096);
	wqe = fq_wqe(&f, 1);
	CHECK(wqe->flush.type == (SHCA_FLUSH_GLOBAL | SHCA_FLUSH_PERSISTENT) &&
	      wqe->flush.level == SHCA_FLUSH_MR &&
	      wqe->flush.length == (uint64_t)1 << 33);

	ibv_wr_start(qpx);
	ibv_wr_flush(qpx, 0x66, 0xfeed0010, 8, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ibv_wr_set_sge(qpx, 1, 0x10, 8);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 2);
	ibv_wr_start(qpx);
	ibv_wr_flush(qpx, 0x66, 0xfeed0010, 8, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	ibv_wr_set_inline_data(qpx, (void *)val, sizeof(val));
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 2);
	pthread_spin_destroy(&f.qp.sq.lock);

	/* not granted at creation: EINVAL */
	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	ibv_wr_start(qpx);
	ibv_wr_flush(qpx, 0x66, 0xfeed0010, 8, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 0);
	pthread_spin_destroy(&f.qp.sq.lock);
}
#endif

/* Sends from RTS on, receives from INIT on; nothing written otherwise. */
static void test_post_state(void)
{
	static const struct {
		enum ibv_qp_state state;
		int send, recv;
	} cases[] = {
		{ IBV_QPS_RESET, EINVAL, EINVAL },
		{ IBV_QPS_INIT, EINVAL, 0 },
		{ IBV_QPS_RTR, EINVAL, 0 },
		{ IBV_QPS_RTS, 0, 0 },
		{ IBV_QPS_SQD, 0, 0 },
		{ IBV_QPS_SQE, 0, 0 },
		{ IBV_QPS_ERR, 0, 0 },
	};
	static uint8_t rq[FQ_ENTRIES][1u << FQ_SHIFT] __attribute__((aligned(64)));
	struct ibv_sge sge = { .addr = 0x10, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	static struct shca_ring_ctl rctl;
	static struct fake_qp f;
	struct ibv_qp_ex *qpx;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
		memset(&rctl, 0, sizeof(rctl));
		pthread_spin_init(&f.qp.rq.lock, PTHREAD_PROCESS_PRIVATE);
		f.qp.rq.ring.map = rq;
		f.qp.rq.ring.ctl = &rctl;
		f.qp.rq.ring.entries = &rq[0][0];
		f.qp.rq.ring.mask = FQ_ENTRIES - 1;
		f.qp.rq.ring.entry_shift = FQ_SHIFT;
		f.qp.rq.max_sge = 1;
		f.qp.vqp.qp.state = cases[i].state;
		bad = NULL;
		CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == cases[i].send);
		CHECK(bad == (cases[i].send ? &wr : NULL));
		CHECK(f.ctl.prod == !cases[i].send);
		qpx = &f.qp.vqp.qp_ex;
		ibv_wr_start(qpx);
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 0x10, 4);
		CHECK(ibv_wr_complete(qpx) == cases[i].send);
		CHECK(f.ctl.prod == (cases[i].send ? 0 : 2));
		rbad = NULL;
		CHECK(shca_post_recv(&f.qp.vqp.qp, &rwr, &rbad) == cases[i].recv);
		CHECK(rbad == (cases[i].recv ? &rwr : NULL));
		CHECK(rctl.prod == !cases[i].recv);
		pthread_spin_destroy(&f.qp.rq.lock);
		pthread_spin_destroy(&f.qp.sq.lock);
	}
}

/* ------------------------------------------------------------------ */
/* XRC                                                                */
/* ------------------------------------------------------------------ */

/* The SRQ number: 24 bits, checked by both APIs; unused off XRC_SEND. */
static void test_xrc_srqn(void)
{
	static struct fake_qp f;
	struct ibv_qp_ex *qpx = &f.qp.vqp.qp_ex;
	struct ibv_sge sge = { .addr = 0x10, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_send_wr wr2;

	fake_qp_init(&f, IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_SEND |
		     IBV_QP_EX_WITH_LOCAL_INV);
	wr.qp_type.xrc.remote_srqn = SHCA_XRC_SRQN_MAX + 1;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL && bad == &wr);
	CHECK(f.ctl.prod == 0 && f.qp.sq.prod == 0);
	/* a chain stops at the bad number; the one before it goes out */
	wr2 = wr;
	wr.qp_type.xrc.remote_srqn = 7;
	wr.next = &wr2;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL && bad == &wr2);
	CHECK(f.ctl.prod == 1 && W0.xrc_remote_srqn == 7);
	/* local operations carry it too, as the caller gave it */
	wr.next = NULL;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.qp_type.xrc.remote_srqn = 9;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == 0 && f.ctl.prod == 2);
	CHECK(fq_wqe(&f, 1)->xrc_remote_srqn == 9);

	/* ibv_wr_set_xrc_srqn: in range, after the opcode, on XRC only */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	ibv_wr_set_xrc_srqn(qpx, SHCA_XRC_SRQN_MAX + 1);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 2);
	ibv_wr_start(qpx);
	ibv_wr_set_xrc_srqn(qpx, 5);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 2);
	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x55);		/* takes no setter */
	ibv_wr_set_xrc_srqn(qpx, 5);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 2);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);				/* never set: 0 */
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 0x654321);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	CHECK(ibv_wr_complete(qpx) == 0 && f.ctl.prod == 4);
	CHECK(fq_wqe(&f, 2)->xrc_remote_srqn == 0 &&
	      fq_wqe(&f, 3)->xrc_remote_srqn == 0x654321);
	pthread_spin_destroy(&f.qp.sq.lock);

	fake_qp_init(&f, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 0x10, 4);
	ibv_wr_set_xrc_srqn(qpx, 5);
	CHECK(ibv_wr_complete(qpx) == EINVAL && f.ctl.prod == 0);
	/* post_send ignores the field off XRC, even out of range */
	wr.opcode = IBV_WR_SEND;
	wr.qp_type.xrc.remote_srqn = 0xffffffff;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == 0 && f.ctl.prod == 1);
	CHECK(W0.xrc_remote_srqn == 0);
	pthread_spin_destroy(&f.qp.sq.lock);
}

/* XRC initiators take no receives; XRC targets post nothing at all. */
static void test_xrc_post(void)
{
	static struct fake_qp f;
	struct ibv_sge sge = { .addr = 0x10, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_mw mw = { .type = IBV_MW_TYPE_1 };
	struct ibv_mw_bind mwb = {};

	fake_qp_init(&f, IBV_QPT_XRC_SEND, 0);
	pthread_spin_init(&f.qp.rq.lock, PTHREAD_PROCESS_PRIVATE);
	CHECK(shca_post_recv(&f.qp.vqp.qp, &rwr, &rbad) == EINVAL &&
	      rbad == &rwr);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;	/* RC's operations */
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == 0 && f.ctl.prod == 1);
	pthread_spin_destroy(&f.qp.rq.lock);
	pthread_spin_destroy(&f.qp.sq.lock);

	/* a target: no rings, state as ibv_open_qp() leaves it */
	fake_qp_init(&f, IBV_QPT_XRC_RECV, 0);
	memset(&f.qp.sq.ring, 0, sizeof(f.qp.sq.ring));
	f.qp.vqp.qp.state = IBV_QPS_UNKNOWN;
	pthread_spin_init(&f.qp.rq.lock, PTHREAD_PROCESS_PRIVATE);
	bad = NULL;
	rbad = NULL;
	wr.opcode = IBV_WR_SEND;
	CHECK(shca_post_send(&f.qp.vqp.qp, &wr, &bad) == EINVAL && bad == &wr);
	CHECK(shca_post_recv(&f.qp.vqp.qp, &rwr, &rbad) == EINVAL &&
	      rbad == &rwr);
	CHECK(shca_bind_mw(&f.qp.vqp.qp, &mw, &mwb) == EINVAL);
	CHECK(f.ctl.prod == 0);
	pthread_spin_destroy(&f.qp.rq.lock);
	pthread_spin_destroy(&f.qp.sq.lock);
}

static void test_qp_check_attr(void)
{
	static struct shca_pd pd;
	static struct verbs_xrcd xrcd;
	static struct shca_cq cq;
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = &pd.ibv_pd;
	CHECK(shca_qp_check_attr(&a) == EINVAL);	/* no send CQ */
	a.send_cq = &cq.vcq.cq;
	CHECK(shca_qp_check_attr(&a) == 0);	/* no recv CQ needed */
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ;
	CHECK(shca_qp_check_attr(&a) == 0);
	a.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;
	CHECK(shca_qp_check_attr(&a) == EINVAL);
	a.comp_mask = 0;				/* no PD */
	CHECK(shca_qp_check_attr(&a) == EINVAL);

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = &xrcd.xrcd;
	CHECK(shca_qp_check_attr(&a) == 0);
	a.xrcd = NULL;
	CHECK(shca_qp_check_attr(&a) == EINVAL);
	a.xrcd = &xrcd.xrcd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;		/* a PD is no XRCD */
	a.pd = &pd.ibv_pd;
	CHECK(shca_qp_check_attr(&a) == EINVAL);
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = 0;
	CHECK(shca_qp_check_attr(&a) == EINVAL);	/* sends nothing */
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	CHECK(shca_qp_check_attr(&a) == EOPNOTSUPP);

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RAW_PACKET;		/* needs both CQs, as RC */
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = &pd.ibv_pd;
	a.send_cq = &cq.vcq.cq;
	CHECK(shca_qp_check_attr(&a) == EINVAL);
	a.qp_type = IBV_QPT_RC;
	CHECK(shca_qp_check_attr(&a) == EINVAL);	/* no recv CQ */
	a.recv_cq = &cq.vcq.cq;
	CHECK(shca_qp_check_attr(&a) == 0);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	CHECK(shca_qp_check_attr(&a) == EOPNOTSUPP);
}

/* Which rings a create response may and must carry, by QP type. */
/*
 * libibverbs walks the specs of a rule by their hdr.size and copies a
 * fixed number of bytes for most types: a size that is not the type's
 * must stop the rule before it does.
 */
static void test_flow_check_attr(void)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4_ext ip;
		struct ibv_flow_spec_tcp_udp udp;
	} r;	/* no padding: every part is 4-byte aligned */

	memset(&r, 0, sizeof(r));
	r.attr.num_of_specs = 3;
	r.attr.port = 1;
	r.eth.type = IBV_FLOW_SPEC_ETH;
	r.eth.size = sizeof(r.eth);
	r.ip.type = IBV_FLOW_SPEC_IPV4_EXT;
	r.ip.size = sizeof(r.ip);
	r.udp.type = IBV_FLOW_SPEC_UDP;
	r.udp.size = sizeof(r.udp);
	CHECK(shca_flow_check_attr(&r.attr) == 0);
	r.attr.num_of_specs = 0;			/* no spec at all */
	CHECK(shca_flow_check_attr(&r.attr) == 0);
	r.attr.num_of_specs = 3;
	r.attr.comp_mask = 1;
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
	r.attr.comp_mask = 0;
	r.eth.size = 0;					/* would loop */
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
	r.eth.size = sizeof(r.eth) - 8;			/* read past it */
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
	r.eth.size = sizeof(r.eth);
	r.udp.size = sizeof(r.udp) + 8;
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
	r.udp.size = sizeof(r.udp);
	r.udp.type = IBV_FLOW_SPEC_TCP | IBV_FLOW_SPEC_INNER;	/* kernel's */
	CHECK(shca_flow_check_attr(&r.attr) == 0);
	r.udp.type = 0x77;				/* no such type */
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
	r.udp.type = IBV_FLOW_SPEC_UDP;
	r.ip.size = 2;					/* shorter than a header */
	CHECK(shca_flow_check_attr(&r.attr) == EINVAL);
}

static void test_qp_check_rings(void)
{
	static struct shca_srq srq;
	const uint32_t SQ = SHCA_CREATE_QP_RESP_CMASK_SQ;
	const uint32_t RQ = SHCA_CREATE_QP_RESP_CMASK_RQ;
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 4;
	a.cap.max_recv_wr = 4;
	CHECK(shca_qp_check_rings(&a, SQ | RQ) == 0);
	CHECK(shca_qp_check_rings(&a, SQ | RQ | 1u << 7) == 0);
	CHECK(shca_qp_check_rings(&a, SQ) == EPROTO);
	CHECK(shca_qp_check_rings(&a, RQ) == EPROTO);
	a.srq = &srq.vsrq.srq;
	a.cap.max_recv_wr = 0;
	CHECK(shca_qp_check_rings(&a, SQ) == 0);
	CHECK(shca_qp_check_rings(&a, SQ | RQ) == EPROTO);

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_SEND;
	a.cap.max_send_wr = 4;
	CHECK(shca_qp_check_rings(&a, SQ) == 0);
	CHECK(shca_qp_check_rings(&a, SQ | RQ) == EPROTO);
	CHECK(shca_qp_check_rings(&a, 0) == EPROTO);

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	CHECK(shca_qp_check_rings(&a, 0) == 0);
	CHECK(shca_qp_check_rings(&a, SQ) == EPROTO);
	CHECK(shca_qp_check_rings(&a, RQ) == EPROTO);
}

static void test_srq_check_attr(void)
{
	static struct shca_pd pd;
	static struct verbs_xrcd xrcd;
	static struct shca_cq cq;
	struct ibv_srq_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
		      IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;
	a.pd = &pd.ibv_pd;
	a.xrcd = &xrcd.xrcd;
	a.cq = &cq.vcq.cq;
	CHECK(shca_srq_check_attr(&a) == 0);
	a.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	a.xrcd = NULL;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.xrcd = &xrcd.xrcd;
	a.pd = NULL;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.pd = &pd.ibv_pd;
	a.comp_mask |= IBV_SRQ_INIT_ATTR_RESERVED;	/* unknown bit */
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.comp_mask &= ~IBV_SRQ_INIT_ATTR_RESERVED;
	a.comp_mask |= 1u << 31;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.comp_mask &= ~(1u << 31);
	/* TM: a CQ, the TM bit and at least one tag and one operation */
	a.srq_type = IBV_SRQT_TM;
	a.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	a.tm_cap.max_num_tags = 4;
	a.tm_cap.max_ops = 2;
	CHECK(shca_srq_check_attr(&a) == 0);
	a.xrcd = NULL;				/* not needed */
	CHECK(shca_srq_check_attr(&a) == 0);
	a.tm_cap.max_ops = 0;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.tm_cap.max_ops = 2;
	a.tm_cap.max_num_tags = 0;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.tm_cap.max_num_tags = 4;
	a.comp_mask &= ~IBV_SRQ_INIT_ATTR_TM;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	a.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.comp_mask |= IBV_SRQ_INIT_ATTR_CQ;
	a.cq = NULL;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.cq = &cq.vcq.cq;
	a.pd = NULL;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	a.pd = &pd.ibv_pd;
	a.xrcd = &xrcd.xrcd;
	a.srq_type = (enum ibv_srq_type)7;
	CHECK(shca_srq_check_attr(&a) == EINVAL);
	/* basic, with or without the type bit */
	a.srq_type = IBV_SRQT_BASIC;
	CHECK(shca_srq_check_attr(&a) == 0);
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;
	a.srq_type = IBV_SRQT_XRC;		/* no type bit: basic */
	CHECK(shca_srq_check_attr(&a) == 0);
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE;
	a.srq_type = IBV_SRQT_BASIC;
	CHECK(shca_srq_check_attr(&a) == EINVAL);	/* no PD */
}

static void test_get_srq_num(void)
{
	static struct shca_srq srq;
	uint32_t num = 0;

	srq.srqn = 0x123456;
	srq.vsrq.srq_type = IBV_SRQT_BASIC;
	CHECK(shca_get_srq_num(&srq.vsrq.srq, &num) == EINVAL && num == 0);
	srq.vsrq.srq_type = IBV_SRQT_XRC;
	CHECK(shca_get_srq_num(&srq.vsrq.srq, &num) == 0 && num == 0x123456);
}

/* The resize request: driver data right after struct ibv_modify_srq. */
static void test_modify_srq_layout(void)
{
	CHECK(sizeof(struct ibv_modify_srq) == 24);
	CHECK(offsetof(struct ushca_modify_srq, drv_payload) ==
	      sizeof(struct ibv_modify_srq));
	CHECK(sizeof(struct ushca_modify_srq) ==
	      sizeof(struct ibv_modify_srq) +
	      sizeof(struct shca_modify_srq_req));
	CHECK(sizeof(struct shca_modify_srq_req) == 16);
	CHECK(offsetof(struct ushca_create_xsrq, drv_payload) ==
	      sizeof(struct ibv_create_xsrq));
}

/*
 * SRQ resize: a memfd plays the uverbs file.  Ring A (8 entries) is at
 * file page 2, ring B (16 entries) at page 8; each is a page of ctl and
 * two of entries, 64-byte RQ entries of one SGE.
 */
#define RS_A_KEY(pg)	(2 * (uint64_t)(pg))
#define RS_B_KEY(pg)	(8 * (uint64_t)(pg))

static struct shca_ring_info rs_info(long page, uint64_t key, uint32_t n)
{
	struct shca_ring_info info = good_info(page);

	info.mmap_key = key;
	info.entries = n;
	return info;
}

static void rs_set_ctl(int fd, uint64_t key, uint32_t prod, uint32_t cons)
{
	struct shca_ring_ctl ctl = { .prod = prod, .cons = cons };

	CHECK(pwrite(fd, &ctl, sizeof(ctl), (off_t)key) == sizeof(ctl));
}

static uint64_t rs_wr_id(int fd, uint64_t key, long page, uint32_t mask,
			 uint32_t idx)
{
	struct shca_recv_wqe w = {};

	CHECK(pread(fd, &w, sizeof(w), (off_t)(key + (uint64_t)page +
						((idx & mask) << 6))) ==
	      sizeof(w));
	return w.wr_id;
}

static int rs_post(struct shca_srq *srq, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = 0x100, .length = 8, .lkey = 3 };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;
	int ret = shca_post_srq_recv(&srq->vsrq.srq, &wr, &bad);

	CHECK(ret ? bad == &wr : bad == NULL);
	return ret;
}

static void rs_srq_init(struct shca_srq *srq, int fd, long page)
{
	struct shca_ring_info a = rs_info(page, RS_A_KEY(page), 8);

	memset(srq, 0, sizeof(*srq));
	pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	srq->wq.max_sge = 1;
	rs_set_ctl(fd, RS_A_KEY(page), 0, 0);
	CHECK(shca_ring_map(&srq->wq.ring, &a, 32, fd) == 0);
}

static void test_srq_resize(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct shca_ring_info b = rs_info(page, RS_B_KEY(page), 16);
	static struct shca_srq srq;
	int fd, i;

	static_assert(sizeof(struct shca_recv_wqe) + sizeof(struct shca_sge) <=
		      64, "one-SGE RQ entry");
	fd = memfd_create("shca-srq", 0);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)(12 * page)) == 0);

	/* 3 posted, the kernel consumed 1, then moved 2 to ring B */
	rs_srq_init(&srq, fd, page);
	for (i = 0; i < 3; i++)
		CHECK(rs_post(&srq, 100 + i) == 0);
	CHECK(srq.wq.ring.ctl->prod == 3);
	rs_set_ctl(fd, RS_B_KEY(page), 3, 1);
	CHECK(shca_srq_switch_ring(&srq, &b, 12, fd) == 0);
	CHECK(srq.wq.ring.map && srq.wq.ring.mask == 15 && srq.wq.prod == 3);
	/* we go on at index 3 of B, up to a full ring (cons still 1) */
	for (i = 3; i < 17; i++)
		CHECK(rs_post(&srq, 100 + i) == 0);
	CHECK(rs_post(&srq, 999) == ENOMEM);
	CHECK(srq.wq.ring.ctl->prod == 17);
	CHECK(rs_wr_id(fd, RS_B_KEY(page), page, 15, 3) == 103);
	CHECK(rs_wr_id(fd, RS_B_KEY(page), page, 15, 16) == 116);
	shca_ring_unmap(&srq.wq.ring);
	pthread_spin_destroy(&srq.wq.lock);

	/* B does not go on from our prod: the SRQ is left without a ring */
	rs_srq_init(&srq, fd, page);
	CHECK(rs_post(&srq, 1) == 0);
	rs_set_ctl(fd, RS_B_KEY(page), 2, 0);
	CHECK(shca_srq_switch_ring(&srq, &b, 8, fd) == EPROTO);
	CHECK(srq.wq.ring.map == NULL && srq.wq.prod == 1);
	CHECK(rs_post(&srq, 2) == EIO);
	pthread_spin_destroy(&srq.wq.lock);

	/* more pending than B holds */
	rs_srq_init(&srq, fd, page);
	CHECK(rs_post(&srq, 1) == 0);
	rs_set_ctl(fd, RS_B_KEY(page), 1, (uint32_t)-16);
	CHECK(shca_srq_switch_ring(&srq, &b, 8, fd) == EPROTO);
	CHECK(rs_post(&srq, 2) == EIO);
	pthread_spin_destroy(&srq.wq.lock);

	/* fewer entries than asked for */
	rs_srq_init(&srq, fd, page);
	rs_set_ctl(fd, RS_B_KEY(page), 0, 0);
	CHECK(shca_srq_switch_ring(&srq, &b, 17, fd) == EPROTO);
	CHECK(srq.wq.ring.map == NULL);
	pthread_spin_destroy(&srq.wq.lock);

	/* a broken description */
	rs_srq_init(&srq, fd, page);
	b.entries = 12;
	CHECK(shca_srq_switch_ring(&srq, &b, 8, fd) == EINVAL);
	CHECK(srq.wq.ring.map == NULL && rs_post(&srq, 1) == EIO);
	pthread_spin_destroy(&srq.wq.lock);
	close(fd);
}

int main(void)
{
	test_version_gate();
	test_parse_abi_attr();
	test_match_device();
	test_ring_check();
	test_ring_map();
	test_req_notify_cq();
	test_poll_cq();
	test_poll_cq_ex();
	test_qp_ex_check();
	test_wqe_opcodes();
	test_qp_ex_batch();
	test_post_send_checks();
	test_post_state();
	test_atomic_write();
#if SHCA_RDMA_CORE_VERSION_CODE >= 4500
	test_flush();
#endif
	test_xrc_srqn();
	test_xrc_post();
	test_qp_check_attr();
	test_flow_check_attr();
	test_qp_check_rings();
	test_srq_check_attr();
	test_get_srq_num();
	test_modify_srq_layout();
	test_srq_resize();
	test_tm();
	test_wq();
	if (failures) {
		fprintf(stderr, "test_unit: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_unit: all passed\n");
	return 0;
}
