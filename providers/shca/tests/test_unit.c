// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Host unit tests for the shca provider's internal functions.  The
 * provider sources are compiled into this binary (see the Makefile), so no
 * RDMA device is needed: rings are backed by a memfd or plain memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shca.h"

static int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

static void test_version_gate(void)
{
	char *real = realpath("/usr/lib/x86_64-linux-gnu/libibverbs.so.1", NULL);

	CHECK(shca_check_libibverbs_path(
		      "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0") == 0);
	CHECK(shca_check_libibverbs_path("libibverbs.so.1.14.44.0") == 0);
	CHECK(shca_check_libibverbs_path(
		      "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.13.43.0"));
	CHECK(shca_check_libibverbs_path("/usr/lib/libibverbs.so.1.14.45.0"));
	CHECK(shca_check_libibverbs_path("/usr/lib/libibverbs.so.1"));
	CHECK(shca_check_libibverbs_path("/x/libibverbs.so.1.14.44.0.bak"));
	CHECK(shca_check_libibverbs_path("/x/mylibibverbs.so.1.14.44.0"));
	CHECK(shca_check_libibverbs_path("/libibverbs.so.1.14.44.0/x"));
	CHECK(shca_check_libibverbs_path(""));
	CHECK(shca_check_libibverbs_path(NULL));
	/* The library installed on this (Debian 12) machine passes. */
	CHECK(real && shca_check_libibverbs_path(real) == 0);
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
	uint32_t word;
	uint8_t *buf;
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
	shca_ring_unmap(&ring);
	CHECK(ring.map == NULL);

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
	attr.comp_mask = 1;
	CHECK(ibv_start_poll(cq, &attr) == EINVAL);
	pthread_spin_destroy(&f.cq.lock);
}

int main(void)
{
	test_version_gate();
	test_parse_abi_attr();
	test_match_device();
	test_ring_check();
	test_ring_map();
	test_poll_cq();
	test_poll_cq_ex();
	if (failures) {
		fprintf(stderr, "test_unit: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_unit: all passed\n");
	return 0;
}
