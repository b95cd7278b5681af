// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * udata_strict: prove the shca uapi contract against the live driver.
 *
 *   udata_strict DEVICE        (as root, inside the e2e VM)
 *
 * The device is opened normally (the shca provider creates the context);
 * every command under test is then issued through libibverbs' private
 * command API (or, where that API offers no driver request, as a raw
 * write(2) on the uverbs fd) with hand-made driver data after the core
 * command, exactly as a provider would build it.  Each case prints one
 * TAP line "ok - udata: NAME" or "not ok - udata: NAME: WHY" and compares
 * exact errno values.  Exit status: 0 if every case passed.
 *
 * The rules proven (include/uapi/rdma/shca-abi.h, Documentation/shca.rst):
 *  - unknown comp_mask bits: EOPNOTSUPP; non-zero reserved_*: EINVAL;
 *  - driver data shorter than the required prefix (comp_mask): EINVAL;
 *  - non-zero bytes past the known structure: EOPNOTSUPP, zero bytes: ok;
 *  - responses are truncated to what userspace offered, never overrun;
 *  - bad attributes: EINVAL; unsupported features: EOPNOTSUPP;
 *  - an SRQ resize names where the new ring's description goes
 *    (struct shca_modify_srq_req): missing or too short, EINVAL;
 *  - mmap of anything but an exact, live ring chunk: EINVAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include "shca-abi.h"

#include "e2e_lib.h"

#define SUITE "udata"
#define CANARY 0xa5

/* ret is 0 or a positive errno. */
static void expect_errno(const char *name, int ret, int want)
{
	tap(ret == want, name, "got %d (%s), want %d (%s)", ret,
	    ret ? strerror(ret) : "success", want,
	    want ? strerror(want) : "success");
}

static int kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma < major || (ma == major && mi < minor);
}

static int all_bytes(const void *p, size_t len, uint8_t v)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ */
/* Device state                                                       */
/* ------------------------------------------------------------------ */

static struct ibv_context *ctx;
static struct ibv_device *dev;
static struct ibv_pd *pd;		/* through the provider */
static struct ibv_cq *pcq;		/* through the provider */
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static int roce_gid = -1;
static union ibv_gid roce_gid_val;

static int find_roce_v2_ipv4_gid(void)
{
	struct ibv_gid_entry e;
	int i;

	for (i = 0; i < pattr.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (e.gid.raw[10] != 0xff || e.gid.raw[11] != 0xff)
			continue;
		roce_gid_val = e.gid;
		return i;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* Raw write(2) commands (for verbs whose ibv_cmd_* takes no driver    */
/* request)                                                           */
/* ------------------------------------------------------------------ */

/*
 * @req: header + core request + driver data, @req_len bytes (multiple of
 * 4); the core request's first field is the response pointer.
 * Return: 0 or errno.
 */
static int raw_write(int fd, uint32_t command, void *req, size_t req_len,
		     void *resp, size_t resp_len)
{
	struct ib_uverbs_cmd_hdr *hdr = req;
	uint64_t *response = (uint64_t *)(hdr + 1);

	hdr->command = command;
	hdr->in_words = req_len / 4;
	hdr->out_words = resp_len / 4;
	*response = (uintptr_t)resp;
	if (write(fd, req, req_len) != (ssize_t)req_len)
		return errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* ALLOC_UCONTEXT (GET_CONTEXT) on a fresh uverbs fd                   */
/* ------------------------------------------------------------------ */

struct get_context_buf {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core;
	uint8_t drv[64];
};

struct get_context_resp_buf {
	struct ib_uverbs_get_context_resp core;
	uint8_t drv[sizeof(struct shca_alloc_ucontext_resp) + 64];
};

/* Return: 0 or errno; @resp receives what the kernel wrote. */
static int get_context(const void *drv, size_t drv_len, size_t resp_drv_len,
		       struct get_context_resp_buf *resp)
{
	struct get_context_buf cmd;
	char path[128];
	int fd, ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(resp, CANARY, sizeof(*resp));
	memcpy(cmd.drv, drv, drv_len);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", dev->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ret = raw_write(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd,
			offsetof(struct get_context_buf, drv) + drv_len, resp,
			sizeof(resp->core) + resp_drv_len);
	if (!ret)
		close((int)resp->core.async_fd);
	close(fd);
	return ret;
}

static void test_ucontext(void)
{
	struct shca_alloc_ucontext_req req = {};
	struct get_context_resp_buf resp;
	struct shca_alloc_ucontext_resp *r = (void *)resp.drv;
	uint8_t big[sizeof(req) + 16];
	int ret;

	ret = get_context(&req, sizeof(req), sizeof(*r), &resp);
	expect_errno("ucontext: exact request accepted", ret, 0);
	if (!ret)
		tap(r->abi_version == SHCA_UVERBS_ABI_VERSION &&
		    (r->comp_mask & SHCA_UCONTEXT_RESP_CMASK_RINGS) &&
		    r->max_cqe == (uint32_t)dattr.max_cqe && !r->reserved_352,
		    "ucontext: response filled", "abi %u cmask %#x max_cqe %u",
		    r->abi_version, r->comp_mask, r->max_cqe);

	req.comp_mask = 1u << 31;
	ret = get_context(&req, sizeof(req), sizeof(*r), &resp);
	expect_errno("ucontext: unknown comp_mask bit rejected", ret, EOPNOTSUPP);
	req.comp_mask = 0;

	req.reserved_32 = 1;
	ret = get_context(&req, sizeof(req), sizeof(*r), &resp);
	expect_errno("ucontext: non-zero reserved_32 rejected", ret, EINVAL);
	req.reserved_32 = 0;

	ret = get_context(NULL, 0, sizeof(*r), &resp);
	expect_errno("ucontext: empty request rejected", ret, EINVAL);

	ret = get_context(&req, 4, sizeof(*r), &resp);
	expect_errno("ucontext: comp_mask-only request accepted", ret, 0);

	memset(big, 0, sizeof(big));
	ret = get_context(big, sizeof(big), sizeof(*r), &resp);
	expect_errno("ucontext: longer request, zero tail accepted", ret, 0);
	big[sizeof(big) - 1] = 1;
	ret = get_context(big, sizeof(big), sizeof(*r), &resp);
	expect_errno("ucontext: longer request, non-zero tail rejected", ret,
		     EOPNOTSUPP);

	ret = get_context(&req, sizeof(req), 8, &resp);
	expect_errno("ucontext: short response accepted", ret, 0);
	if (!ret)
		tap(r->abi_version == SHCA_UVERBS_ABI_VERSION &&
		    all_bytes(resp.drv + 8, sizeof(resp.drv) - 8, CANARY),
		    "ucontext: short response truncated, canary intact",
		    "abi %u, bytes past 8 overwritten", r->abi_version);

	ret = get_context(&req, sizeof(req), sizeof(*r) + 64, &resp);
	expect_errno("ucontext: long response accepted", ret, 0);
	if (!ret) {
		uint8_t *tail = resp.drv + sizeof(*r);

		tap(all_bytes(tail, 64, CANARY) || all_bytes(tail, 64, 0),
		    "ucontext: long response tail untouched or zeroed",
		    "tail byte 0 = %#x", tail[0]);
	}
}

/* ------------------------------------------------------------------ */
/* ALLOC_PD with driver data                                          */
/* ------------------------------------------------------------------ */

struct pd_cmd_buf {
	struct ibv_alloc_pd ibv;
	uint8_t drv[16];
};

struct pd_resp_buf {
	struct ib_uverbs_alloc_pd_resp ibv;
	uint8_t drv[sizeof(struct shca_alloc_pd_resp) + 16];
};

static int alloc_pd_raw(const void *drv, size_t drv_len, size_t resp_drv_len,
			struct pd_resp_buf *resp, int keep, struct ibv_pd *out)
{
	struct pd_cmd_buf cmd;
	struct ibv_pd p = {};
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.drv, drv, drv_len);
	memset(resp, CANARY, sizeof(*resp));
	ret = ibv_cmd_alloc_pd(ctx, &p, &cmd.ibv, sizeof(cmd.ibv) + drv_len,
			       &resp->ibv, sizeof(resp->ibv) + resp_drv_len);
	if (!ret) {
		if (keep)
			*out = p;
		else
			ibv_cmd_dealloc_pd(&p);
	}
	return ret;
}

static void test_pd(void)
{
	uint8_t drv[16] = {};
	struct pd_resp_buf resp;
	int ret;

	ret = alloc_pd_raw(NULL, 0, sizeof(struct shca_alloc_pd_resp), &resp,
			   0, NULL);
	expect_errno("alloc_pd: no request accepted", ret, 0);
	ret = alloc_pd_raw(drv, sizeof(drv), sizeof(struct shca_alloc_pd_resp),
			   &resp, 0, NULL);
	expect_errno("alloc_pd: zero request bytes accepted", ret, 0);
	drv[12] = 0x80;
	ret = alloc_pd_raw(drv, sizeof(drv), sizeof(struct shca_alloc_pd_resp),
			   &resp, 0, NULL);
	expect_errno("alloc_pd: non-zero request bytes rejected", ret,
		     EOPNOTSUPP);
	ret = alloc_pd_raw(NULL, 0, 4, &resp, 0, NULL);
	expect_errno("alloc_pd: short response accepted", ret, 0);
	if (!ret)
		tap(all_bytes(resp.drv + 4, sizeof(resp.drv) - 4, CANARY),
		    "alloc_pd: short response truncated, canary intact",
		    "bytes past 4 overwritten");
	ret = alloc_pd_raw(NULL, 0, sizeof(resp.drv), &resp, 0, NULL);
	expect_errno("alloc_pd: long response accepted", ret, 0);
	if (!ret) {
		uint8_t *tail = resp.drv + sizeof(struct shca_alloc_pd_resp);

		tap(all_bytes(tail, 16, CANARY) || all_bytes(tail, 16, 0),
		    "alloc_pd: long response tail untouched or zeroed",
		    "tail byte 0 = %#x", tail[0]);
	}
}

/* ------------------------------------------------------------------ */
/* CREATE_CQ / RESIZE_CQ                                               */
/* ------------------------------------------------------------------ */

struct cq_cmd_buf {
	struct ibv_create_cq_ex ibv;
	uint8_t drv[4096];
};

struct cq_resp_buf {
	struct ib_uverbs_ex_create_cq_resp ibv;
	struct shca_create_cq_resp drv;
	uint8_t tail[64];
};

struct rawcq {
	struct verbs_cq vcq;
	struct cq_resp_buf resp;
};

static struct cq_cmd_buf cq_cmd;

/*
 * Create a CQ bypassing the provider.  @drv_len bytes of @drv are the
 * driver request, @resp_drv_len bytes of response are offered.
 */
static int create_cq_raw(struct rawcq *cq, uint32_t cqe, uint32_t vector,
			 const void *drv, size_t drv_len, size_t resp_drv_len)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.comp_vector = vector,
	};

	memset(cq, 0, sizeof(*cq));
	memset(&cq->resp, CANARY, sizeof(cq->resp));
	pthread_mutex_init(&cq->vcq.cq.mutex, NULL);
	pthread_cond_init(&cq->vcq.cq.cond, NULL);
	memset(&cq_cmd, 0, sizeof(cq_cmd));
	if (drv_len)
		memcpy(cq_cmd.drv, drv, drv_len);
	return ibv_cmd_create_cq_ex(ctx, &attr, &cq->vcq, &cq_cmd.ibv,
				    sizeof(cq_cmd.ibv) + drv_len,
				    &cq->resp.ibv,
				    sizeof(cq->resp.ibv) + resp_drv_len, 0);
}

static void destroy_cq_raw(struct rawcq *cq)
{
	int ret = ibv_cmd_destroy_cq(&cq->vcq.cq);

	if (ret)
		tap(0, "destroy_cq", "ibv_cmd_destroy_cq: %d", ret);
}

/* Create with the given request; destroy on success.  Return: errno. */
static int try_cq(uint32_t cqe, uint32_t vector, const void *drv,
		  size_t drv_len)
{
	struct rawcq cq;
	int ret;

	ret = create_cq_raw(&cq, cqe, vector, drv, drv_len,
			    sizeof(struct shca_create_cq_resp));
	if (!ret)
		destroy_cq_raw(&cq);
	return ret;
}

static void test_create_cq(void)
{
	struct shca_create_cq_req req = {};
	static uint8_t big[4096];
	struct rawcq cq;
	int ret;

	ret = create_cq_raw(&cq, 16, 0, &req, sizeof(req),
			    sizeof(struct shca_create_cq_resp));
	expect_errno("create_cq: exact request accepted", ret, 0);
	if (!ret) {
		struct shca_ring_info *ri = &cq.resp.drv.ring;

		tap(ri->entries >= 16 && !(ri->entries & (ri->entries - 1)) &&
		    ri->mmap_len && !ri->reserved_288 &&
		    cq.resp.drv.comp_mask == SHCA_CREATE_CQ_RESP_CMASK_ARM,
		    "create_cq: response describes a ring",
		    "entries %u len %llu", ri->entries,
		    (unsigned long long)ri->mmap_len);
		tap(all_bytes(cq.resp.tail, sizeof(cq.resp.tail), CANARY),
		    "create_cq: nothing written past the response",
		    "tail overwritten");
		destroy_cq_raw(&cq);
	}

	req.comp_mask = 1;
	expect_errno("create_cq: unknown comp_mask bit 0 rejected",
		     try_cq(16, 0, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = 1u << 31;
	expect_errno("create_cq: unknown comp_mask bit 31 rejected",
		     try_cq(16, 0, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = 0;
	req.reserved_32 = 0x100;
	expect_errno("create_cq: non-zero reserved_32 rejected",
		     try_cq(16, 0, &req, sizeof(req)), EINVAL);
	req.reserved_32 = 0;

	expect_errno("create_cq: empty request rejected",
		     try_cq(16, 0, NULL, 0), EINVAL);
	expect_errno("create_cq: 2-byte request rejected",
		     try_cq(16, 0, &req, 2), EINVAL);
	expect_errno("create_cq: comp_mask-only request accepted",
		     try_cq(16, 0, &req, 4), 0);

	memset(big, 0, sizeof(big));
	expect_errno("create_cq: 4 KiB request, zero tail accepted",
		     try_cq(16, 0, big, sizeof(big)), 0);
	big[sizeof(big) - 1] = 1;
	expect_errno("create_cq: 4 KiB request, last byte non-zero rejected",
		     try_cq(16, 0, big, sizeof(big)), EOPNOTSUPP);
	memset(big, 0, sizeof(big));
	big[sizeof(req)] = 1;
	expect_errno("create_cq: first byte past the struct non-zero rejected",
		     try_cq(16, 0, big, sizeof(req) + 1), EOPNOTSUPP);

	/* short response: comp_mask and cqn only */
	ret = create_cq_raw(&cq, 16, 0, &req, sizeof(req), 8);
	expect_errno("create_cq: short response accepted", ret, 0);
	if (!ret) {
		tap(cq.resp.drv.comp_mask == SHCA_CREATE_CQ_RESP_CMASK_ARM &&
		    all_bytes(&cq.resp.drv.ring,
			      sizeof(cq.resp.drv.ring) + sizeof(cq.resp.tail),
			      CANARY),
		    "create_cq: short response truncated, canary intact",
		    "bytes past 8 overwritten");
		destroy_cq_raw(&cq);
	}
	/* no response at all */
	ret = create_cq_raw(&cq, 16, 0, &req, sizeof(req), 0);
	expect_errno("create_cq: no response buffer accepted", ret, 0);
	if (!ret) {
		tap(all_bytes(&cq.resp.drv, sizeof(cq.resp.drv), CANARY),
		    "create_cq: no response, nothing written",
		    "driver response overwritten");
		destroy_cq_raw(&cq);
	}
	ret = create_cq_raw(&cq, 16, 0, &req, sizeof(req),
			    sizeof(cq.resp.drv) + sizeof(cq.resp.tail));
	expect_errno("create_cq: long response accepted", ret, 0);
	if (!ret) {
		tap(all_bytes(cq.resp.tail, sizeof(cq.resp.tail), CANARY) ||
		    all_bytes(cq.resp.tail, sizeof(cq.resp.tail), 0),
		    "create_cq: long response tail untouched or zeroed",
		    "tail byte 0 = %#x", cq.resp.tail[0]);
		destroy_cq_raw(&cq);
	}

	/* hostile attributes */
	expect_errno("create_cq: cqe 0 rejected", try_cq(0, 0, &req, sizeof(req)),
		     EINVAL);
	expect_errno("create_cq: cqe -1 rejected",
		     try_cq(0xffffffffu, 0, &req, sizeof(req)), EINVAL);
	expect_errno("create_cq: cqe 2^31 rejected",
		     try_cq(0x80000000u, 0, &req, sizeof(req)), EINVAL);
	expect_errno("create_cq: cqe max_cqe + 1 rejected",
		     try_cq((uint32_t)dattr.max_cqe + 1, 0, &req, sizeof(req)),
		     EINVAL);
	expect_errno("create_cq: cqe max_cqe accepted",
		     try_cq((uint32_t)dattr.max_cqe, 0, &req, sizeof(req)), 0);
	expect_errno("create_cq: comp_vector == num_comp_vectors rejected",
		     try_cq(16, (uint32_t)ctx->num_comp_vectors, &req,
			    sizeof(req)), EINVAL);
	expect_errno("create_cq: comp_vector 2^31 rejected",
		     try_cq(16, 0x80000000u, &req, sizeof(req)), EINVAL);
}

struct resize_cmd_buf {
	struct ibv_resize_cq ibv;
	uint8_t drv[32];
};

struct resize_resp_buf {
	struct ib_uverbs_resize_cq_resp ibv;
	struct shca_resize_cq_resp drv;
	uint8_t tail[32];
};

static int resize_raw(struct rawcq *cq, int cqe, const void *drv,
		      size_t drv_len, size_t resp_drv_len,
		      struct resize_resp_buf *resp)
{
	struct resize_cmd_buf cmd;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.drv, drv, drv_len);
	memset(resp, CANARY, sizeof(*resp));
	return ibv_cmd_resize_cq(&cq->vcq.cq, cqe, &cmd.ibv,
				 sizeof(cmd.ibv) + drv_len, &resp->ibv,
				 sizeof(resp->ibv) + resp_drv_len);
}

static void test_resize_cq(void)
{
	struct shca_resize_cq_req req = {};
	struct resize_resp_buf resp;
	uint8_t big[sizeof(req) + 8] = {};
	struct rawcq cq;
	size_t rl = sizeof(struct shca_resize_cq_resp);
	int ret;

	ret = create_cq_raw(&cq, 16, 0, &req, sizeof(req),
			    sizeof(struct shca_create_cq_resp));
	if (ret) {
		tap(0, "resize_cq: setup", "create_cq: %d", ret);
		return;
	}
	req.comp_mask = 4;
	expect_errno("resize_cq: unknown comp_mask bit rejected",
		     resize_raw(&cq, 64, &req, sizeof(req), rl, &resp),
		     EOPNOTSUPP);
	req.comp_mask = 0;
	req.reserved_32 = 1;
	expect_errno("resize_cq: non-zero reserved_32 rejected",
		     resize_raw(&cq, 64, &req, sizeof(req), rl, &resp), EINVAL);
	req.reserved_32 = 0;
	expect_errno("resize_cq: empty request rejected",
		     resize_raw(&cq, 64, NULL, 0, rl, &resp), EINVAL);
	big[sizeof(big) - 1] = 7;
	expect_errno("resize_cq: longer request, non-zero tail rejected",
		     resize_raw(&cq, 64, big, sizeof(big), rl, &resp),
		     EOPNOTSUPP);
	expect_errno("resize_cq: cqe 0 rejected",
		     resize_raw(&cq, 0, &req, sizeof(req), rl, &resp), EINVAL);
	expect_errno("resize_cq: cqe -1 rejected",
		     resize_raw(&cq, -1, &req, sizeof(req), rl, &resp), EINVAL);
	expect_errno("resize_cq: cqe max_cqe + 1 rejected",
		     resize_raw(&cq, dattr.max_cqe + 1, &req, sizeof(req), rl,
				&resp), EINVAL);
	big[sizeof(big) - 1] = 0;
	ret = resize_raw(&cq, 64, big, sizeof(big), rl, &resp);
	expect_errno("resize_cq: longer request, zero tail accepted", ret, 0);
	if (!ret)
		tap(resp.drv.ring.entries >= 64 && !resp.drv.reserved_32 &&
		    all_bytes(resp.tail, sizeof(resp.tail), CANARY),
		    "resize_cq: response describes the new ring, no overrun",
		    "entries %u", resp.drv.ring.entries);
	ret = resize_raw(&cq, 128, &req, sizeof(req), 8, &resp);
	expect_errno("resize_cq: short response accepted", ret, 0);
	if (!ret)
		tap(all_bytes(&resp.drv.ring, sizeof(resp.drv.ring) +
			      sizeof(resp.tail), CANARY),
		    "resize_cq: short response truncated, canary intact",
		    "bytes past 8 overwritten");
	destroy_cq_raw(&cq);
}

/* ------------------------------------------------------------------ */
/* mmap of ring chunks                                                */
/* ------------------------------------------------------------------ */

static int try_mmap(size_t len, int prot, int flags, off_t off, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* Map @len bytes at @off read-only, then try to make them executable. */
static int try_mprotect_exec(size_t len, off_t off, int fd)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	int ret = 0;

	if (p == MAP_FAILED)
		return -1;
	if (mprotect(p, len, PROT_READ | PROT_EXEC))
		ret = errno;
	munmap(p, len);
	return ret;
}

static void test_mmap(void)
{
	struct shca_create_cq_req req = {};
	long pg = sysconf(_SC_PAGESIZE);
	struct shca_ring_info ri;
	struct ibv_context *ctx2;
	struct rawcq cq;
	off_t key, c0;
	size_t len;
	volatile struct shca_ring_ctl *ctl;
	void *p;
	int ret;

	/* 4096 CQEs: 256 KiB + ctl, i.e. several 64 KiB chunks */
	ret = create_cq_raw(&cq, 4096, 0, &req, sizeof(req),
			    sizeof(struct shca_create_cq_resp));
	if (ret) {
		tap(0, "mmap: setup", "create_cq: %d", ret);
		return;
	}
	ri = cq.resp.drv.ring;
	key = (off_t)ri.mmap_key;
	c0 = (off_t)1 << ri.chunk_shift;
	len = (size_t)c0 < ri.mmap_len ? (size_t)c0 : ri.mmap_len;
	tap(ri.mmap_len > (uint64_t)c0 && c0 >= pg, "mmap: ring has several chunks",
	    "len %llu chunk %lld", (unsigned long long)ri.mmap_len,
	    (long long)c0);

	expect_errno("mmap: exact chunk 0 accepted",
		     try_mmap(len, PROT_READ | PROT_WRITE, MAP_SHARED, key,
			      ctx->cmd_fd), 0);
	expect_errno("mmap: chunk 1 at key + chunk size accepted",
		     try_mmap(len, PROT_READ | PROT_WRITE, MAP_SHARED, key + c0,
			      ctx->cmd_fd), 0);
	expect_errno("mmap: chunk 0 one page short rejected",
		     try_mmap(len - pg, PROT_READ, MAP_SHARED, key,
			      ctx->cmd_fd), EINVAL);
	expect_errno("mmap: chunk 0 one page long rejected",
		     try_mmap(len + pg, PROT_READ, MAP_SHARED, key,
			      ctx->cmd_fd), EINVAL);
	expect_errno("mmap: whole ring in one call rejected",
		     try_mmap(ri.mmap_len, PROT_READ, MAP_SHARED, key,
			      ctx->cmd_fd), EINVAL);
	expect_errno("mmap: one page inside chunk 0 rejected",
		     try_mmap(pg, PROT_READ, MAP_SHARED, key + pg,
			      ctx->cmd_fd), EINVAL);
	expect_errno("mmap: MAP_PRIVATE rejected",
		     try_mmap(len, PROT_READ | PROT_WRITE, MAP_PRIVATE, key,
			      ctx->cmd_fd), EINVAL);
	/* ring memory is data: no executable mappings (as efa) */
	expect_errno("mmap: PROT_EXEC rejected",
		     try_mmap(len, PROT_READ | PROT_EXEC, MAP_SHARED, key,
			      ctx->cmd_fd), EPERM);
	expect_errno("mmap: mprotect(PROT_EXEC) of a ring refused",
		     try_mprotect_exec(len, key, ctx->cmd_fd), EACCES);
	expect_errno("mmap: unknown key rejected",
		     try_mmap(pg, PROT_READ, MAP_SHARED, (off_t)1 << 40,
			      ctx->cmd_fd), EINVAL);

	ctx2 = ibv_open_device(dev);
	if (ctx2) {
		expect_errno("mmap: key of another context rejected",
			     try_mmap(len, PROT_READ, MAP_SHARED, key,
				      ctx2->cmd_fd), EINVAL);
		ibv_close_device(ctx2);
	} else {
		tap(0, "mmap: key of another context rejected",
		    "second ibv_open_device: %d", errno);
	}

	/* a mapping outlives its CQ; the key dies with the CQ */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
		 key);
	destroy_cq_raw(&cq);
	if (p != MAP_FAILED) {
		ctl = p;
		ctl->cons = 1234;
		tap(ctl->cons == 1234 && ctl->prod == 0,
		    "mmap: mapping still usable after destroy_cq",
		    "prod %u cons %u", ctl->prod, ctl->cons);
		munmap(p, len);
	} else {
		tap(0, "mmap: mapping still usable after destroy_cq",
		    "mmap: %d", errno);
	}
	expect_errno("mmap: key of a destroyed CQ rejected",
		     try_mmap(len, PROT_READ, MAP_SHARED, key, ctx->cmd_fd),
		     EINVAL);
}

/* ------------------------------------------------------------------ */
/* CREATE_QP                                                          */
/* ------------------------------------------------------------------ */

struct qp_cmd_buf {
	struct ibv_create_qp ibv;
	uint8_t drv[256];
};

struct qp_resp_buf {
	struct ib_uverbs_create_qp_resp ibv;
	struct shca_create_qp_resp drv;
	uint8_t tail[64];
};

static struct qp_cmd_buf qp_cmd;
static struct qp_resp_buf qp_resp;

static struct ibv_qp_init_attr_ex qp_attr(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = pcq,
		.recv_cq = pcq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	return a;
}

static int create_qp_raw(struct verbs_qp *qp, struct ibv_qp_init_attr_ex *a,
			 const void *drv, size_t drv_len, size_t resp_drv_len)
{
	memset(qp, 0, sizeof(*qp));
	memset(&qp_cmd, 0, sizeof(qp_cmd));
	memset(&qp_resp, CANARY, sizeof(qp_resp));
	if (drv_len)
		memcpy(qp_cmd.drv, drv, drv_len);
	return ibv_cmd_create_qp_ex(ctx, qp, a, &qp_cmd.ibv,
				    sizeof(qp_cmd.ibv) + drv_len, &qp_resp.ibv,
				    sizeof(qp_resp.ibv) + resp_drv_len);
}

static int try_qp_attr(struct ibv_qp_init_attr_ex *a, const void *drv,
		       size_t drv_len)
{
	struct verbs_qp qp;
	int ret;

	ret = create_qp_raw(&qp, a, drv, drv_len,
			    sizeof(struct shca_create_qp_resp));
	if (!ret)
		ibv_cmd_destroy_qp(&qp.qp);
	return ret;
}

static int try_qp(enum ibv_qp_type type, const void *drv, size_t drv_len)
{
	struct ibv_qp_init_attr_ex a = qp_attr(type);

	return try_qp_attr(&a, drv, drv_len);
}

static void test_create_qp(void)
{
	struct shca_create_qp_req req = {};
	struct ibv_qp_init_attr_ex a;
	static uint8_t big[256];
	struct verbs_qp qp;
	int ret;

	a = qp_attr(IBV_QPT_RC);
	ret = create_qp_raw(&qp, &a, &req, sizeof(req),
			    sizeof(struct shca_create_qp_resp));
	expect_errno("create_qp: exact request accepted", ret, 0);
	if (!ret) {
		tap(qp_resp.drv.comp_mask == (SHCA_CREATE_QP_RESP_CMASK_SQ |
					      SHCA_CREATE_QP_RESP_CMASK_RQ) &&
		    qp_resp.drv.qpn == qp.qp.qp_num &&
		    qp_resp.drv.sq.entries >= 8 && qp_resp.drv.rq.entries >= 8 &&
		    !qp_resp.drv.reserved_96 &&
		    all_bytes(qp_resp.tail, sizeof(qp_resp.tail), CANARY),
		    "create_qp: response describes SQ and RQ, no overrun",
		    "cmask %#x qpn %u/%u", qp_resp.drv.comp_mask,
		    qp_resp.drv.qpn, qp.qp.qp_num);
		ibv_cmd_destroy_qp(&qp.qp);
	}
	expect_errno("create_qp: UC accepted", try_qp(IBV_QPT_UC, &req,
						      sizeof(req)), 0);
	expect_errno("create_qp: UD accepted", try_qp(IBV_QPT_UD, &req,
						      sizeof(req)), 0);

	req.comp_mask = 2;
	expect_errno("create_qp: unknown comp_mask bit rejected",
		     try_qp(IBV_QPT_RC, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = 0;
	req.reserved_32 = 0xffffffffu;
	expect_errno("create_qp: non-zero reserved_32 rejected",
		     try_qp(IBV_QPT_RC, &req, sizeof(req)), EINVAL);
	req.reserved_32 = 0;
	expect_errno("create_qp: empty request rejected",
		     try_qp(IBV_QPT_RC, NULL, 0), EINVAL);
	expect_errno("create_qp: 3-byte request rejected",
		     try_qp(IBV_QPT_RC, &req, 3), EINVAL);
	memset(big, 0, sizeof(big));
	expect_errno("create_qp: longer request, zero tail accepted",
		     try_qp(IBV_QPT_RC, big, sizeof(big)), 0);
	big[100] = 0x10;
	expect_errno("create_qp: longer request, non-zero tail rejected",
		     try_qp(IBV_QPT_RC, big, sizeof(big)), EOPNOTSUPP);

	a = qp_attr(IBV_QPT_RC);
	ret = create_qp_raw(&qp, &a, &req, sizeof(req), 16);
	expect_errno("create_qp: short response accepted", ret, 0);
	if (!ret) {
		tap(qp_resp.drv.qpn == qp.qp.qp_num &&
		    all_bytes(&qp_resp.drv.sq, sizeof(qp_resp.drv.sq) * 2 +
			      sizeof(qp_resp.tail), CANARY),
		    "create_qp: short response truncated, canary intact",
		    "bytes past 16 overwritten");
		ibv_cmd_destroy_qp(&qp.qp);
	}
	a = qp_attr(IBV_QPT_RC);
	ret = create_qp_raw(&qp, &a, &req, sizeof(req),
			    sizeof(qp_resp.drv) + sizeof(qp_resp.tail));
	expect_errno("create_qp: long response accepted", ret, 0);
	if (!ret) {
		tap(all_bytes(qp_resp.tail, sizeof(qp_resp.tail), CANARY) ||
		    all_bytes(qp_resp.tail, sizeof(qp_resp.tail), 0),
		    "create_qp: long response tail untouched or zeroed",
		    "tail byte 0 = %#x", qp_resp.tail[0]);
		ibv_cmd_destroy_qp(&qp.qp);
	}

	/* hostile capabilities */
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_sge = (uint32_t)dattr.max_sge + 1;
	expect_errno("create_qp: max_send_sge > max_sge rejected",
		     try_qp_attr(&a, &req, sizeof(req)), EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_recv_sge = (uint32_t)dattr.max_sge + 1;
	expect_errno("create_qp: max_recv_sge > max_sge rejected",
		     try_qp_attr(&a, &req, sizeof(req)), EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_wr = (uint32_t)dattr.max_qp_wr + 1;
	expect_errno("create_qp: max_send_wr > max_qp_wr rejected",
		     try_qp_attr(&a, &req, sizeof(req)), EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_recv_wr = 0xffffffffu;
	expect_errno("create_qp: max_recv_wr 2^32-1 rejected",
		     try_qp_attr(&a, &req, sizeof(req)), EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_inline_data = 1u << 20;
	expect_errno("create_qp: max_inline_data 1 MiB rejected",
		     try_qp_attr(&a, &req, sizeof(req)), EINVAL);
	a = qp_attr(IBV_QPT_RC);
	a.cap.max_send_wr = (uint32_t)dattr.max_qp_wr;
	a.cap.max_send_sge = (uint32_t)dattr.max_sge;
	expect_errno("create_qp: max_qp_wr and max_sge accepted",
		     try_qp_attr(&a, &req, sizeof(req)), 0);

	/* the RX hash part belongs to RSS QPs only */
	req.comp_mask = SHCA_CREATE_QP_REQ_CMASK_RX_HASH;
	expect_errno("create_qp: RX_HASH bit on an RC QP rejected",
		     try_qp(IBV_QPT_RC, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = 0;
	req.rx_hash_key_len = SHCA_RX_HASH_KEY_LEN;
	expect_errno("create_qp: RX hash fields without the bit rejected",
		     try_qp(IBV_QPT_RC, &req, sizeof(req)), EINVAL);
	req.rx_hash_key_len = 0;
	expect_errno("create_qp: RAW_PACKET accepted (root)",
		     try_qp(IBV_QPT_RAW_PACKET, &req, sizeof(req)), 0);

	/* unsupported types */
	expect_errno("create_qp: DRIVER type unsupported",
		     try_qp(IBV_QPT_DRIVER, &req, sizeof(req)), EOPNOTSUPP);
}

struct srq_cmd_buf {
	struct ibv_create_srq ibv;
	uint8_t drv[256];
};

struct srq_resp_buf {
	struct ib_uverbs_create_srq_resp ibv;
	struct shca_create_srq_resp drv;
	uint8_t tail[16];
};

static struct srq_cmd_buf srq_cmd;
static struct srq_resp_buf srq_resp;

static int create_srq_raw(struct ibv_srq *srq, uint32_t max_wr,
			  uint32_t max_sge, const void *drv, size_t drv_len,
			  size_t resp_drv_len)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};

	memset(srq, 0, sizeof(*srq));
	memset(&srq_cmd, 0, sizeof(srq_cmd));
	memset(&srq_resp, CANARY, sizeof(srq_resp));
	if (drv_len)
		memcpy(srq_cmd.drv, drv, drv_len);
	return ibv_cmd_create_srq(pd, srq, &a, &srq_cmd.ibv,
				  sizeof(srq_cmd.ibv) + drv_len, &srq_resp.ibv,
				  sizeof(srq_resp.ibv) + resp_drv_len);
}

static int try_srq(uint32_t max_wr, uint32_t max_sge, const void *drv,
		   size_t drv_len)
{
	struct ibv_srq srq;
	int ret;

	ret = create_srq_raw(&srq, max_wr, max_sge, drv, drv_len,
			     sizeof(struct shca_create_srq_resp));
	if (!ret)
		ibv_cmd_destroy_srq(&srq);
	return ret;
}

/* The SRQ's response describes a ring of at least max_wr receive WQEs. */
static int srq_resp_ok(uint32_t max_wr)
{
	const struct shca_ring_info *r = &srq_resp.drv.ring;

	return srq_resp.drv.comp_mask == SHCA_CREATE_SRQ_RESP_CMASK_RING &&
	       srq_resp.drv.srqn && r->entries >= max_wr &&
	       !(r->entries & (r->entries - 1)) && !r->reserved_288 &&
	       r->mmap_len && r->ctl_offset < r->mmap_len &&
	       r->entries_offset < r->mmap_len &&
	       all_bytes(srq_resp.tail, sizeof(srq_resp.tail), CANARY);
}

static void test_srq(void)
{
	struct shca_create_srq_req req = {};
	static uint8_t big[256];
	struct ibv_srq srq;
	int ret;

	ret = create_srq_raw(&srq, 16, 1, &req, sizeof(req),
			     sizeof(struct shca_create_srq_resp));
	expect_errno("create_srq: exact request accepted", ret, 0);
	if (!ret) {
		tap(srq_resp_ok(16), "create_srq: response describes the ring, no overrun",
		    "cmask %#x srqn %u entries %u", srq_resp.drv.comp_mask,
		    srq_resp.drv.srqn, srq_resp.drv.ring.entries);
		ibv_cmd_destroy_srq(&srq);
	}
	req.comp_mask = 2;
	expect_errno("create_srq: unknown comp_mask bit rejected",
		     try_srq(16, 1, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = SHCA_CREATE_SRQ_REQ_CMASK_TM;
	req.tm_max_ops = 8;
	expect_errno("create_srq: TM request for a basic SRQ rejected",
		     try_srq(16, 1, &req, sizeof(req)), EINVAL);
	req.comp_mask = 0;
	expect_errno("create_srq: tm_max_ops without the TM bit rejected",
		     try_srq(16, 1, &req, sizeof(req)), EINVAL);
	req.tm_max_ops = 0;
	expect_errno("create_srq: empty request rejected",
		     try_srq(16, 1, NULL, 0), EINVAL);
	expect_errno("create_srq: 3-byte request rejected",
		     try_srq(16, 1, &req, 3), EINVAL);
	memset(big, 0, sizeof(big));
	expect_errno("create_srq: longer request, zero tail accepted",
		     try_srq(16, 1, big, sizeof(big)), 0);
	big[200] = 1;
	expect_errno("create_srq: longer request, non-zero tail rejected",
		     try_srq(16, 1, big, sizeof(big)), EOPNOTSUPP);

	ret = create_srq_raw(&srq, 16, 1, &req, sizeof(req), 8);
	expect_errno("create_srq: short response accepted", ret, 0);
	if (!ret) {
		tap(srq_resp.drv.srqn &&
		    all_bytes(&srq_resp.drv.ring, sizeof(srq_resp.drv.ring) +
			      sizeof(srq_resp.tail), CANARY),
		    "create_srq: short response truncated, canary intact",
		    "bytes past 8 overwritten");
		ibv_cmd_destroy_srq(&srq);
	}

	/* hostile capabilities */
	expect_errno("create_srq: max_wr 0 rejected",
		     try_srq(0, 1, &req, sizeof(req)), EINVAL);
	expect_errno("create_srq: max_wr > max_srq_wr rejected",
		     try_srq((uint32_t)dattr.max_srq_wr + 1, 1, &req,
			     sizeof(req)), EINVAL);
	expect_errno("create_srq: max_wr 2^32-1 rejected",
		     try_srq(0xffffffffu, 1, &req, sizeof(req)), EINVAL);
	expect_errno("create_srq: max_sge > max_srq_sge rejected",
		     try_srq(16, (uint32_t)dattr.max_srq_sge + 1, &req,
			     sizeof(req)), EINVAL);
	expect_errno("create_srq: max_srq_wr and max_srq_sge accepted",
		     try_srq((uint32_t)dattr.max_srq_wr,
			     (uint32_t)dattr.max_srq_sge, &req, sizeof(req)), 0);
}

/* ------------------------------------------------------------------ */
/* MODIFY_SRQ (resize: the new ring's description at ring_info_va)     */
/* ------------------------------------------------------------------ */

struct msrq_cmd_buf {
	struct ibv_modify_srq ibv;
	uint8_t drv[32];
};

/* The kernel's answer to a resize, and bytes after it that must stay. */
struct ring_out {
	struct shca_ring_info ri;
	uint8_t tail[16];
};

static int modify_srq_raw(struct ibv_srq *srq, uint32_t max_wr,
			  uint32_t limit, int mask, const void *drv,
			  size_t drv_len)
{
	struct ibv_srq_attr at = { .max_wr = max_wr, .srq_limit = limit };
	struct msrq_cmd_buf cmd;

	memset(&cmd, 0, sizeof(cmd));
	if (drv_len)
		memcpy(cmd.drv, drv, drv_len);
	return ibv_cmd_modify_srq(srq, &at, mask, &cmd.ibv,
				  sizeof(cmd.ibv) + drv_len);
}

/* A request asking for the new ring's description in @out. */
static struct shca_modify_srq_req ring_req(struct ring_out *out)
{
	struct shca_modify_srq_req r = {
		.comp_mask = SHCA_MODIFY_SRQ_REQ_CMASK_RING_INFO,
		.ring_info_len = sizeof(out->ri),
		.ring_info_va = (uintptr_t)&out->ri,
	};

	memset(out, CANARY, sizeof(*out));
	return r;
}

/* Resize cases on @srq (created with max_wr 16 and no mapping). */
static void test_modify_srq_on(struct ibv_srq *srq, const char *kind)
{
	struct shca_modify_srq_req req;
	uint8_t big[sizeof(req) + 8];
	struct ring_out out;
	char name[160];
	int ret;

#define MSRQ_CASE(fmt) (snprintf(name, sizeof(name), "modify_srq (%s): " fmt, kind), name)
	req = ring_req(&out);
	req.comp_mask |= 1u << 1;
	expect_errno(MSRQ_CASE("unknown comp_mask bit rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, &req,
				    sizeof(req)), EOPNOTSUPP);
	req = ring_req(&out);
	req.ring_info_len = sizeof(out.ri) - 1;
	expect_errno(MSRQ_CASE("ring_info_len one byte short rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, &req,
				    sizeof(req)), EINVAL);
	req.ring_info_len = 0;
	expect_errno(MSRQ_CASE("ring_info_len 0 rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, &req,
				    sizeof(req)), EINVAL);
	tap(all_bytes(&out, sizeof(out), CANARY),
	    MSRQ_CASE("refused resizes wrote nothing"), "ring_info written");
	expect_errno(MSRQ_CASE("resize without a request rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, NULL, 0),
		     EINVAL);
	req = ring_req(&out);
	req.comp_mask = 0;
	expect_errno(MSRQ_CASE("resize without RING_INFO rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, &req,
				    sizeof(req)), EINVAL);
	req = ring_req(&out);
	memset(big, 0, sizeof(big));
	memcpy(big, &req, sizeof(req));
	big[sizeof(big) - 1] = 3;
	expect_errno(MSRQ_CASE("longer request, non-zero tail rejected"),
		     modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, big,
				    sizeof(big)), EOPNOTSUPP);
	req = ring_req(&out);
	expect_errno(MSRQ_CASE("max_wr > max_srq_wr rejected"),
		     modify_srq_raw(srq, (uint32_t)dattr.max_srq_wr + 1, 0,
				    IBV_SRQ_MAX_WR, &req, sizeof(req)), EINVAL);
	expect_errno(MSRQ_CASE("limit only, no request accepted"),
		     modify_srq_raw(srq, 0, 4, IBV_SRQ_LIMIT, NULL, 0), 0);
	req = ring_req(&out);
	req.comp_mask = 1u << 7;
	expect_errno(MSRQ_CASE("limit only, unknown comp_mask bit rejected"),
		     modify_srq_raw(srq, 0, 4, IBV_SRQ_LIMIT, &req, sizeof(req)),
		     EOPNOTSUPP);
	expect_errno(MSRQ_CASE("limit above max_wr rejected"),
		     modify_srq_raw(srq, 0, 1u << 30, IBV_SRQ_LIMIT, NULL, 0),
		     EINVAL);

	req = ring_req(&out);
	ret = modify_srq_raw(srq, 64, 0, IBV_SRQ_MAX_WR, &req, sizeof(req));
	expect_errno(MSRQ_CASE("resize to 64 accepted"), ret, 0);
	if (!ret)
		tap(out.ri.entries >= 64 && !(out.ri.entries & (out.ri.entries - 1)) &&
		    out.ri.mmap_len && !out.ri.reserved_288 &&
		    all_bytes(out.tail, sizeof(out.tail), CANARY),
		    MSRQ_CASE("the new ring described, nothing written past it"),
		    "entries %u len %llu", out.ri.entries,
		    (unsigned long long)out.ri.mmap_len);
	/* more room offered than the structure: only the structure written */
	req = ring_req(&out);
	req.ring_info_len = sizeof(out);
	ret = modify_srq_raw(srq, 128, 0, IBV_SRQ_MAX_WR, &req, sizeof(req));
	expect_errno(MSRQ_CASE("resize with a longer ring_info_len accepted"),
		     ret, 0);
	if (!ret)
		tap(out.ri.entries >= 128 &&
		    (all_bytes(out.tail, sizeof(out.tail), CANARY) ||
		     all_bytes(out.tail, sizeof(out.tail), 0)),
		    MSRQ_CASE("longer ring_info_len: tail untouched or zeroed"),
		    "entries %u tail byte 0 = %#x", out.ri.entries,
		    out.tail[0]);
#undef MSRQ_CASE
}

static void test_modify_srq(void)
{
	struct shca_create_srq_req req = {};
	struct ibv_srq srq;
	int ret;

	ret = create_srq_raw(&srq, 16, 1, &req, sizeof(req),
			     sizeof(struct shca_create_srq_resp));
	if (ret) {
		tap(0, "modify_srq: setup", "create_srq: %d", ret);
		return;
	}
	test_modify_srq_on(&srq, "basic");
	expect_errno("modify_srq (basic): destroy after the resizes",
		     ibv_cmd_destroy_srq(&srq), 0);
}

/* ------------------------------------------------------------------ */
/* XRC: XRC_SEND and XRC_RECV QPs, XRC SRQs (CREATE_XSRQ)              */
/* ------------------------------------------------------------------ */

static struct ibv_xrcd *xrcd;	/* through the provider */

struct xsrq_cmd_buf {
	struct ibv_create_xsrq ibv;
	uint8_t drv[256];
};

static struct xsrq_cmd_buf xsrq_cmd;

static int create_xsrq_raw(struct verbs_srq *srq, const void *drv,
			   size_t drv_len, size_t resp_drv_len)
{
	struct ibv_srq_init_attr_ex a;

	xrc_srq_attr(&a, xrcd, pd, pcq, 16);
	memset(srq, 0, sizeof(*srq));
	memset(&xsrq_cmd, 0, sizeof(xsrq_cmd));
	memset(&srq_resp, CANARY, sizeof(srq_resp));
	if (drv_len)
		memcpy(xsrq_cmd.drv, drv, drv_len);
	return ibv_cmd_create_srq_ex(ctx, srq, &a, &xsrq_cmd.ibv,
				     sizeof(xsrq_cmd.ibv) + drv_len,
				     &srq_resp.ibv,
				     sizeof(srq_resp.ibv) + resp_drv_len);
}

static int try_xsrq(const void *drv, size_t drv_len)
{
	struct verbs_srq srq;
	int ret;

	ret = create_xsrq_raw(&srq, drv, drv_len,
			      sizeof(struct shca_create_srq_resp));
	if (!ret)
		ibv_cmd_destroy_srq(&srq.srq);
	return ret;
}

static void test_xrc(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct shca_create_srq_req sreq = {};
	struct shca_create_qp_req req = {};
	struct ibv_qp_init_attr_ex a;
	static uint8_t big[256];
	struct verbs_srq srq;
	struct verbs_qp qp;
	int ret;

	/* XRC_SEND: an SQ and no RQ */
	a = qp_attr(IBV_QPT_XRC_SEND);
	ret = create_qp_raw(&qp, &a, &req, sizeof(req),
			    sizeof(struct shca_create_qp_resp));
	expect_errno("create_qp: XRC_SEND accepted", ret, 0);
	if (!ret) {
		tap(qp_resp.drv.comp_mask == SHCA_CREATE_QP_RESP_CMASK_SQ &&
		    qp_resp.drv.qpn == qp.qp.qp_num &&
		    qp_resp.drv.sq.entries >= 8 &&
		    all_bytes(qp_resp.tail, sizeof(qp_resp.tail), CANARY),
		    "create_qp: XRC_SEND response describes an SQ only",
		    "cmask %#x qpn %u/%u sq entries %u",
		    qp_resp.drv.comp_mask, qp_resp.drv.qpn, qp.qp.qp_num,
		    qp_resp.drv.sq.entries);
		ibv_cmd_destroy_qp(&qp.qp);
	}
	req.comp_mask = 1u << 5;
	expect_errno("create_qp: XRC_SEND, unknown comp_mask bit rejected",
		     try_qp(IBV_QPT_XRC_SEND, &req, sizeof(req)), EOPNOTSUPP);
	req.comp_mask = 0;

	xrcd = ibv_open_xrcd(ctx, &xa);
	if (!xrcd) {
		tap(0, "xrc: setup", "ibv_open_xrcd: %d", errno);
		return;
	}

	/*
	 * XRC_RECV: no ring at all.  ib_core creates the shared target QP
	 * without the caller's udata (ib_create_qp_user()), so the driver
	 * sees no request and writes no response: both are inert.
	 */
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	ret = create_qp_raw(&qp, &a, &req, sizeof(req),
			    sizeof(struct shca_create_qp_resp));
	expect_errno("create_qp: XRC_RECV accepted", ret, 0);
	if (!ret) {
		tap(all_bytes(&qp_resp.drv, sizeof(qp_resp.drv) +
			      sizeof(qp_resp.tail), CANARY) && qp.qp.qp_num,
		    "create_qp: XRC_RECV (no udata reaches the driver): driver response untouched",
		    "cmask %#x, qpn %u", qp_resp.drv.comp_mask, qp.qp.qp_num);
		ibv_cmd_destroy_qp(&qp.qp);
	}
	big[0] = 0xff;
	expect_errno("create_qp: XRC_RECV, driver data ignored by ib_core",
		     try_qp_attr(&a, big, sizeof(big)), 0);
	big[0] = 0;

	/* XRC SRQ */
	ret = create_xsrq_raw(&srq, &sreq, sizeof(sreq),
			      sizeof(struct shca_create_srq_resp));
	expect_errno("create_srq_ex: XRC, exact request accepted", ret, 0);
	if (!ret) {
		tap(srq_resp_ok(16) && srq_resp.drv.srqn == srq.srq_num,
		    "create_srq_ex: XRC response describes the ring, SRQ number = srqn",
		    "cmask %#x srqn %u (verbs %u) entries %u",
		    srq_resp.drv.comp_mask, srq_resp.drv.srqn, srq.srq_num,
		    srq_resp.drv.ring.entries);
		test_modify_srq_on(&srq.srq, "XRC");
		ibv_cmd_destroy_srq(&srq.srq);
	}
	sreq.comp_mask = 2;
	expect_errno("create_srq_ex: XRC, unknown comp_mask bit rejected",
		     try_xsrq(&sreq, sizeof(sreq)), EOPNOTSUPP);
	sreq.comp_mask = SHCA_CREATE_SRQ_REQ_CMASK_TM;
	sreq.tm_max_ops = 0x80;
	expect_errno("create_srq_ex: XRC, TM request rejected",
		     try_xsrq(&sreq, sizeof(sreq)), EINVAL);
	sreq.comp_mask = 0;
	expect_errno("create_srq_ex: XRC, tm_max_ops without the TM bit rejected",
		     try_xsrq(&sreq, sizeof(sreq)), EINVAL);
	sreq.tm_max_ops = 0;
	expect_errno("create_srq_ex: XRC, empty request rejected",
		     try_xsrq(NULL, 0), EINVAL);
	memset(big, 0, sizeof(big));
	big[sizeof(big) - 1] = 1;
	expect_errno("create_srq_ex: XRC, longer request, non-zero tail rejected",
		     try_xsrq(big, sizeof(big)), EOPNOTSUPP);

	ret = ibv_close_xrcd(xrcd);
	expect_errno("xrc: ibv_close_xrcd after the raw objects", ret, 0);
}

/* ------------------------------------------------------------------ */
/* REG_MR                                                             */
/* ------------------------------------------------------------------ */

struct mr_cmd_buf {
	struct ibv_reg_mr ibv;
	uint8_t drv[16];
};

static void *mr_buf;
#define MR_LEN (64 * 1024)

static int try_mr(void *addr, size_t len, uint64_t iova, int access,
		  const void *drv, size_t drv_len)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct mr_cmd_buf cmd;
	struct verbs_mr vmr;
	int ret;

	memset(&vmr, 0, sizeof(vmr));
	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.drv, drv, drv_len);
	ret = ibv_cmd_reg_mr(pd, addr, len, iova, access, &vmr, &cmd.ibv,
			     sizeof(cmd.ibv) + drv_len, &resp, sizeof(resp));
	if (!ret)
		ibv_cmd_dereg_mr(&vmr);
	return ret;
}

/* Does the device advertise (explicit) on-demand paging? */
static int odp_advertised(void)
{
	struct ibv_device_attr_ex ax;

	memset(&ax, 0, sizeof(ax));
	if (ibv_query_device_ex(ctx, NULL, &ax))
		return 0;
	return !!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT);
}

/*
 * IBV_ACCESS_ON_DEMAND: explicit (of huge pages too: IBV_ACCESS_HUGETLB
 * comes only with it) and implicit (address 0, length SIZE_MAX, iova 0)
 * ODP MRs where the kernel has ODP (and shca advertises it).  Without
 * ODP ib_core's ib_check_mr_access() answers before the driver is
 * called: EINVAL up to 6.1, EOPNOTSUPP in later kernels.
 */
static void test_reg_mr_odp(void)
{
	const int odp = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND;
	uint64_t va = (uintptr_t)mr_buf;

	expect_errno("reg_mr: HUGETLB without ON_DEMAND unsupported",
		     try_mr(mr_buf, MR_LEN, va,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_HUGETLB, NULL,
			    0), EOPNOTSUPP);
	if (!odp_advertised()) {
		expect_errno("reg_mr: ON_DEMAND rejected by ib_core",
			     try_mr(mr_buf, MR_LEN, va, odp, NULL, 0),
			     kernel_before(6, 2) ? EINVAL : EOPNOTSUPP);
		return;
	}
	expect_errno("reg_mr: ON_DEMAND accepted (explicit ODP)",
		     try_mr(mr_buf, MR_LEN, va, odp, NULL, 0), 0);
	expect_errno("reg_mr: ON_DEMAND with iova != address accepted",
		     try_mr(mr_buf, MR_LEN, 0x10000 + (va & 0xfff), odp, NULL,
			    0), 0);
	expect_errno("reg_mr: implicit ODP accepted",
		     try_mr(NULL, SIZE_MAX, 0, odp, NULL, 0), 0);
	expect_errno("reg_mr: implicit ODP at a non-zero iova rejected",
		     try_mr(NULL, SIZE_MAX, 0x10000, odp, NULL, 0), EINVAL);
	expect_errno("reg_mr: ON_DEMAND | HUGETLB accepted",
		     try_mr(mr_buf, MR_LEN, va, odp | IBV_ACCESS_HUGETLB, NULL,
			    0), 0);
}

static void test_reg_mr(void)
{
	uint64_t va = (uintptr_t)mr_buf;
	uint8_t drv[16] = {};
	const int lw = IBV_ACCESS_LOCAL_WRITE;

	expect_errno("reg_mr: local write accepted",
		     try_mr(mr_buf, MR_LEN, va, lw, NULL, 0), 0);
	expect_errno("reg_mr: remote read/write accepted",
		     try_mr(mr_buf, MR_LEN, va, lw | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ, NULL, 0), 0);
	expect_errno("reg_mr: zero request bytes accepted",
		     try_mr(mr_buf, MR_LEN, va, lw, drv, sizeof(drv)), 0);
	drv[3] = 1;
	expect_errno("reg_mr: non-zero request bytes rejected",
		     try_mr(mr_buf, MR_LEN, va, lw, drv, sizeof(drv)),
		     EOPNOTSUPP);
	expect_errno("reg_mr: REMOTE_WRITE without LOCAL_WRITE rejected",
		     try_mr(mr_buf, MR_LEN, va, IBV_ACCESS_REMOTE_WRITE, NULL, 0),
		     EINVAL);
	expect_errno("reg_mr: REMOTE_ATOMIC without LOCAL_WRITE rejected",
		     try_mr(mr_buf, MR_LEN, va, IBV_ACCESS_REMOTE_ATOMIC, NULL, 0),
		     EINVAL);
	expect_errno("reg_mr: REMOTE_ATOMIC accepted (IB_ATOMIC_HCA)",
		     try_mr(mr_buf, MR_LEN, va, lw | IBV_ACCESS_REMOTE_ATOMIC,
			    NULL, 0), 0);
	expect_errno("reg_mr: MW_BIND accepted (memory windows)",
		     try_mr(mr_buf, MR_LEN, va, lw | IBV_ACCESS_MW_BIND, NULL, 0),
		     0);
	expect_errno("reg_mr: ZERO_BASED unsupported",
		     try_mr(mr_buf, MR_LEN, va, lw | IBV_ACCESS_ZERO_BASED, NULL,
			    0), EOPNOTSUPP);
	test_reg_mr_odp();
	expect_errno("reg_mr: zero length rejected",
		     try_mr(mr_buf, 0, va, lw, NULL, 0), EINVAL);
	expect_errno("reg_mr: length 2^41 rejected",
		     try_mr(mr_buf, 1ULL << 41, va, lw, NULL, 0), EINVAL);
	expect_errno("reg_mr: start + length wraps rejected",
		     try_mr((void *)(uintptr_t)0xfffffffffffff000ULL, 0x2000,
			    0x1000, lw, NULL, 0), EINVAL);
	expect_errno("reg_mr: iova + length wraps rejected",
		     try_mr(mr_buf, MR_LEN,
			    0xffffffffffff0000ULL + (va & 0xfff), lw, NULL, 0),
		     EINVAL);
}

struct rereg_cmd_buf {
	struct ibv_rereg_mr ibv;
	uint8_t drv[16];
};

static int rereg(struct verbs_mr *vmr, int flags, void *addr, size_t len,
		 int access, const void *drv, size_t drv_len)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct rereg_cmd_buf cmd;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.drv, drv, drv_len);
	return ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, len,
				(uintptr_t)addr, access, pd, &cmd.ibv,
				sizeof(cmd.ibv) + drv_len, &resp, sizeof(resp));
}

static void test_rereg_mr(void)
{
	struct ib_uverbs_reg_mr_resp resp;
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	struct mr_cmd_buf cmd;
	struct verbs_mr vmr;
	uint8_t drv[16] = {};
	int ret;

	memset(&vmr, 0, sizeof(vmr));
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_reg_mr(pd, mr_buf, MR_LEN, (uintptr_t)mr_buf, lw, &vmr,
			     &cmd.ibv, sizeof(cmd.ibv), &resp, sizeof(resp));
	if (ret) {
		tap(0, "rereg_mr: setup", "reg_mr: %d", ret);
		return;
	}
	drv[5] = 9;
	expect_errno("rereg_mr: non-zero request bytes rejected",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0, lw, drv,
			   sizeof(drv)), EOPNOTSUPP);
	expect_errno("rereg_mr: REMOTE_ATOMIC accepted (IB_ATOMIC_HCA)",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			   lw | IBV_ACCESS_REMOTE_ATOMIC, NULL, 0), 0);
	expect_errno("rereg_mr: REMOTE_WRITE without LOCAL_WRITE rejected",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE, NULL, 0), EINVAL);
	expect_errno("rereg_mr: translation to length 0 rejected",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_TRANSLATION, mr_buf, 0, lw,
			   NULL, 0), EINVAL);
	expect_errno("rereg_mr: access change accepted",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
			   lw | IBV_ACCESS_REMOTE_READ, drv, 0), 0);
	expect_errno("rereg_mr: translation change accepted",
		     rereg(&vmr, IBV_REREG_MR_CHANGE_TRANSLATION, mr_buf,
			   MR_LEN / 2, lw, NULL, 0), 0);
	expect_errno("rereg_mr: MR deregisters after failed reregs",
		     ibv_cmd_dereg_mr(&vmr), 0);
}

/* ------------------------------------------------------------------ */
/* CREATE_AH                                                          */
/* ------------------------------------------------------------------ */

static struct ibv_ah_attr ah_attr(void)
{
	struct ibv_ah_attr a = {
		.grh = {
			.dgid = roce_gid_val,
			.sgid_index = (uint8_t)roce_gid,
			.hop_limit = 64,
		},
		.is_global = 1,
		.port_num = 1,
	};
	return a;
}

struct ah_resp_buf {
	struct ib_uverbs_create_ah_resp ibv;
	struct shca_create_ah_resp drv;
	uint8_t tail[16];
};

static int try_ah(struct ibv_ah_attr *a, size_t resp_drv_len,
		  struct ah_resp_buf *resp)
{
	struct ibv_ah ah = {};
	int ret;

	memset(resp, CANARY, sizeof(*resp));
	ret = ibv_cmd_create_ah(pd, &ah, a, &resp->ibv,
				sizeof(resp->ibv) + resp_drv_len);
	if (!ret)
		ibv_cmd_destroy_ah(&ah);
	return ret;
}

/* CREATE_AH with driver request data: ibv_cmd_create_ah sends none. */
static int try_ah_drv(struct ibv_ah_attr *a, const void *drv, size_t drv_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_ah core;
		uint8_t drv[16];
	} cmd;
	struct ah_resp_buf resp;
	struct ibv_ah ah = {};
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	cmd.core.pd_handle = pd->handle;
	cmd.core.attr.grh.sgid_index = a->grh.sgid_index;
	cmd.core.attr.grh.hop_limit = a->grh.hop_limit;
	memcpy(cmd.core.attr.grh.dgid, a->grh.dgid.raw, 16);
	cmd.core.attr.is_global = a->is_global;
	cmd.core.attr.port_num = a->port_num;
	memcpy(cmd.drv, drv, drv_len);
	ret = raw_write(ctx->cmd_fd, IB_USER_VERBS_CMD_CREATE_AH, &cmd,
			offsetof(typeof(cmd), drv) + drv_len, &resp,
			sizeof(resp.ibv) + sizeof(resp.drv));
	if (!ret) {
		ah.context = ctx;
		ah.pd = pd;
		ah.handle = resp.ibv.ah_handle;
		ibv_cmd_destroy_ah(&ah);
	}
	return ret;
}

static void test_create_ah(void)
{
	struct ah_resp_buf resp;
	struct ibv_ah_attr a;
	uint8_t drv[16] = {};
	int ret;

	if (roce_gid < 0) {
		tap(0, "create_ah: setup", "no RoCE v2 IPv4 GID on port 1");
		return;
	}
	a = ah_attr();
	ret = try_ah(&a, sizeof(resp.drv), &resp);
	expect_errno("create_ah: valid AH accepted", ret, 0);
	if (!ret)
		tap(resp.drv.ah_handle && !resp.drv.comp_mask &&
		    all_bytes(resp.tail, sizeof(resp.tail), CANARY),
		    "create_ah: response carries a handle, no overrun",
		    "handle %u", resp.drv.ah_handle);
	ret = try_ah(&a, 4, &resp);
	expect_errno("create_ah: short response accepted", ret, 0);
	if (!ret)
		tap(all_bytes(&resp.drv.ah_handle, 4 + sizeof(resp.tail),
			      CANARY),
		    "create_ah: short response truncated, canary intact",
		    "bytes past 4 overwritten");
	expect_errno("create_ah: zero request bytes accepted",
		     try_ah_drv(&a, drv, sizeof(drv)), 0);
	drv[8] = 2;
	expect_errno("create_ah: non-zero request bytes rejected",
		     try_ah_drv(&a, drv, sizeof(drv)), EOPNOTSUPP);

	a = ah_attr();
	a.grh.sgid_index = 255;
	expect_errno("create_ah: sgid_index beyond the table rejected",
		     try_ah(&a, sizeof(resp.drv), &resp), EINVAL);
	a = ah_attr();
	a.is_global = 0;
	expect_errno("create_ah: RoCE AH without GRH rejected",
		     try_ah(&a, sizeof(resp.drv), &resp), EINVAL);
	a = ah_attr();
	a.port_num = 2;
	expect_errno("create_ah: port 2 rejected",
		     try_ah(&a, sizeof(resp.drv), &resp), EINVAL);
}

/* ------------------------------------------------------------------ */
/* MODIFY_QP                                                          */
/* ------------------------------------------------------------------ */

struct mqp_cmd_buf {
	struct ibv_modify_qp ibv;
	uint8_t drv[16];
};

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  const void *drv, size_t drv_len)
{
	struct mqp_cmd_buf cmd;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.drv, drv, drv_len);
	return ibv_cmd_modify_qp(qp, attr, mask, &cmd.ibv,
				 sizeof(cmd.ibv) + drv_len);
}

static int rtr_attr(struct ibv_qp_attr *at, struct ibv_qp *qp,
		    enum ibv_mtu mtu)
{
	memset(at, 0, sizeof(*at));
	at->qp_state = IBV_QPS_RTR;
	at->path_mtu = mtu;
	at->dest_qp_num = qp->qp_num;
	at->rq_psn = 1;
	at->max_dest_rd_atomic = 1;
	at->min_rnr_timer = 12;
	at->ah_attr = ah_attr();
	return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static void test_modify_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = pcq,
		.recv_cq = pcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr at;
	uint8_t drv[16] = {};
	enum ibv_mtu above;
	struct ibv_qp *qp;
	int mask;

	qp = ibv_create_qp(pd, &init);
	if (!qp) {
		tap(0, "modify_qp: setup", "ibv_create_qp: %d", errno);
		return;
	}
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	expect_errno("modify_qp: RESET -> RTS rejected",
		     modify(qp, &at, IBV_QP_STATE, NULL, 0), EINVAL);
	at.qp_state = IBV_QPS_RTR;
	expect_errno("modify_qp: RESET -> RTR rejected",
		     modify(qp, &at, IBV_QP_STATE, NULL, 0), EINVAL);
	at.qp_state = IBV_QPS_INIT;
	expect_errno("modify_qp: INIT without required attributes rejected",
		     modify(qp, &at, IBV_QP_STATE, NULL, 0), EINVAL);

	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	at.pkey_index = 1;
	expect_errno("modify_qp: pkey_index 1 rejected",
		     modify(qp, &at, mask, NULL, 0), EINVAL);
	at.pkey_index = 0;
	at.qp_access_flags = 1 << 20;
	expect_errno("modify_qp: unknown access flag rejected",
		     modify(qp, &at, mask, NULL, 0), EINVAL);
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	drv[0] = 1;
	expect_errno("modify_qp: non-zero request bytes rejected",
		     modify(qp, &at, mask, drv, sizeof(drv)), EOPNOTSUPP);
	drv[0] = 0;
	expect_errno("modify_qp: RESET -> INIT with zero request bytes",
		     modify(qp, &at, mask, drv, sizeof(drv)), 0);
	/* IBV_ACCESS_FLUSH_GLOBAL and _PERSISTENT (rdma-core 45+) */
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     (1 << 8) | (1 << 9);
	expect_errno("modify_qp: FLUSH permissions accepted (INIT -> INIT)",
		     modify(qp, &at, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, NULL, 0), 0);
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	if (roce_gid < 0) {
		tap(0, "modify_qp: RTR cases", "no RoCE v2 IPv4 GID");
		goto out;
	}
	above = pattr.active_mtu < IBV_MTU_4096 ? pattr.active_mtu + 1 : 0;
	if (above) {
		mask = rtr_attr(&at, qp, above);
		expect_errno("modify_qp: RTR with path_mtu above active_mtu rejected",
			     modify(qp, &at, mask, NULL, 0), EINVAL);
	}
	mask = rtr_attr(&at, qp, (enum ibv_mtu)7);
	expect_errno("modify_qp: RTR with path_mtu 7 (invalid enum) rejected",
		     modify(qp, &at, mask, NULL, 0), EINVAL);
	mask = rtr_attr(&at, qp, pattr.active_mtu);
	at.max_dest_rd_atomic = 255;
	expect_errno("modify_qp: RTR with max_dest_rd_atomic 255 rejected",
		     modify(qp, &at, mask, NULL, 0), EINVAL);
	mask = rtr_attr(&at, qp, pattr.active_mtu);
	at.ah_attr.grh.sgid_index = 255;
	expect_errno("modify_qp: RTR with bad sgid_index rejected",
		     modify(qp, &at, mask, NULL, 0), EINVAL);
	mask = rtr_attr(&at, qp, pattr.active_mtu);
	expect_errno("modify_qp: INIT -> RTR at active_mtu accepted",
		     modify(qp, &at, mask, NULL, 0), 0);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.sq_psn = 1;
	at.max_rd_atomic = 1;
	at.path_mig_state = IBV_MIG_REARM;
	mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	expect_errno("modify_qp: RTS with PATH_MIG_STATE (APM) unsupported",
		     modify(qp, &at, mask | IBV_QP_PATH_MIG_STATE, NULL, 0),
		     EOPNOTSUPP);
	at.cur_qp_state = IBV_QPS_INIT;
	expect_errno("modify_qp: wrong cur_qp_state rejected",
		     modify(qp, &at, mask | IBV_QP_CUR_STATE, NULL, 0), EINVAL);
	expect_errno("modify_qp: RTR -> RTS accepted",
		     modify(qp, &at, mask, NULL, 0), 0);
out:
	ibv_destroy_qp(qp);
}

/* ------------------------------------------------------------------ */

static int setup(const char *name)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return errno;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev)
		return ENODEV;
	ctx = ibv_open_device(dev);
	if (!ctx)
		return errno;
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pattr))
		return EIO;
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return errno;
	pcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!pcq)
		return errno;
	mr_buf = aligned_alloc(4096, MR_LEN);
	if (!mr_buf)
		return ENOMEM;
	memset(mr_buf, 0, MR_LEN);
	roce_gid = find_roce_v2_ipv4_gid();
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_pd *pd2;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	e2e_name = SUITE;
	ret = setup(argv[1]);
	if (ret) {
		printf("not ok - " SUITE ": setup: %s\n", strerror(ret));
		return 1;
	}
	printf("# %s: max_cqe %d max_qp_wr %d max_sge %d active_mtu %d gid %d\n",
	       argv[1], dattr.max_cqe, dattr.max_qp_wr, dattr.max_sge,
	       pattr.active_mtu, roce_gid);

	test_ucontext();
	test_pd();
	test_create_cq();
	test_resize_cq();
	test_mmap();
	test_create_qp();
	test_srq();
	test_modify_srq();
	test_xrc();
	test_reg_mr();
	test_rereg_mr();
	test_create_ah();
	test_modify_qp();

	/* the device still works after all of the above */
	pd2 = ibv_alloc_pd(ctx);
	tap(pd2 != NULL, "device still works (alloc_pd)", "errno %d", errno);
	if (pd2)
		ibv_dealloc_pd(pd2);

	ibv_destroy_cq(pcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(mr_buf);
	printf("# udata_strict: %d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}
