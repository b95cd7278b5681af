// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca userspace provider: registration, device matching, context and
 * the simple verbs (device/port query, PD, XRC domain, MR, AH).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shca.h"

/* ------------------------------------------------------------------ */
/* Load-time checks                                                   */
/* ------------------------------------------------------------------ */

/**
 * shca_check_libibverbs_path - is @path the libibverbs we were built for?
 * @path: resolved (realpath) file name of the loaded libibverbs
 *
 * Return: 0 if the file name is exactly SHCA_LIBIBVERBS_FILE.
 */
int shca_check_libibverbs_path(const char *path)
{
	const char *base;

	if (!path)
		return EINVAL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strcmp(base, SHCA_LIBIBVERBS_FILE) ? EPROTO : 0;
}

/* Resolve the file that provides our private entry points. */
static int shca_loaded_libibverbs(char *out, size_t out_len)
{
	Dl_info info;
	char *real;

	/*
	 * No program references this private symbol, so its address is the
	 * one inside libibverbs itself, never a PLT stub in the executable.
	 */
	if (!dladdr((void *)&verbs_register_driver, &info) ||
	    !info.dli_fname)
		return ENOENT;
	real = realpath(info.dli_fname, NULL);
	if (!real)
		return errno;
	snprintf(out, out_len, "%s", real);
	free(real);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Device matching                                                    */
/* ------------------------------------------------------------------ */

/**
 * shca_parse_abi_attr - parse the contents of SHCA_SYSFS_ABI_ATTR
 * @buf: file contents, not necessarily NUL terminated
 * @len: number of bytes in @buf
 *
 * Return: the decimal value, or -1 if @buf is not a plain number
 * optionally followed by one newline.
 */
int shca_parse_abi_attr(const char *buf, size_t len)
{
	long v = 0;
	size_t i;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len > 9)
		return -1;
	for (i = 0; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		v = v * 10 + (buf[i] - '0');
	}
	return (int)v;
}

/*
 * Claim the device only if its driver publishes our sysfs attribute with
 * the ABI version we speak.  Device names are not looked at.
 */
bool shca_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof(SHCA_SYSFS_ABI_ATTR) + 1];
	char buf[16];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", sysfs_dev->ibdev_path,
		     SHCA_SYSFS_ABI_ATTR) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return false;
	return shca_parse_abi_attr(buf, (size_t)n) == SHCA_UVERBS_ABI_VERSION;
}

static struct verbs_device *shca_alloc_device(struct verbs_sysfs_dev *sysfs)
{
	struct shca_device *dev;

	(void)sysfs;
	dev = calloc(1, sizeof(*dev));
	return dev ? &dev->ibv_dev : NULL;
}

static void shca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct shca_device, ibv_dev));
}

/* ------------------------------------------------------------------ */
/* Device and port queries                                            */
/* ------------------------------------------------------------------ */

static int shca_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t raw;
	int ret;

	/*
	 * Everything but fw_ver comes from ib_core's extended response as
	 * libibverbs copies it, the TM caps (tm_caps) included.
	 */
	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	/*
	 * ib_core carries no RSS hash function or fields: where the kernel
	 * offers RSS QPs, they are what it implements (shca-abi.h).
	 */
	if (attr_size >= offsetof(struct ibv_device_attr_ex, rss_caps) +
			 sizeof(attr->rss_caps) &&
	    attr->rss_caps.supported_qpts) {
		attr->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
		attr->rss_caps.rx_hash_fields_mask = SHCA_RX_HASH_FIELDS;
	}
	/* The kernel reports a raw number; see SHCA_FW_VER_ENCODE. */
	raw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(raw >> 32),
		 (unsigned int)((raw >> 16) & 0xffff),
		 (unsigned int)(raw & 0xffff));
	return 0;
}

static int shca_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/* ------------------------------------------------------------------ */
/* Protection domains                                                 */
/* ------------------------------------------------------------------ */

static struct ibv_pd *shca_alloc_pd(struct ibv_context *ctx)
{
	struct ushca_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct shca_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

static int shca_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret = ibv_cmd_dealloc_pd(ibpd);

	if (!ret)
		free(container_of(ibpd, struct shca_pd, ibv_pd));
	return ret;
}

/* ------------------------------------------------------------------ */
/* XRC domains                                                        */
/* ------------------------------------------------------------------ */

/*
 * The XRC domain is ib_core's: it shares one per inode between the
 * processes that open the same file (O_CREAT, O_EXCL) and the driver
 * takes no data, so none is sent.
 */
static struct ibv_xrcd *shca_open_xrcd(struct ibv_context *ctx,
				       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

/*
 * Fails (EBUSY, from ib_core) while a QP or SRQ created in the domain
 * through this handle still exists.
 */
static int shca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Memory regions                                                     */
/* ------------------------------------------------------------------ */

static struct ibv_mr *shca_reg_mr(struct ibv_pd *pd, void *addr,
				  size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int shca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
				(uintptr_t)addr, access, pd, &cmd, sizeof(cmd),
				&resp, sizeof(resp));
}

/*
 * ibv_advise_mr(): the kernel maps the ranges of ODP MRs (prefetch, for
 * write, or present pages only) before returning, with or without
 * IBV_ADVISE_MR_FLAG_FLUSH.
 */
static int shca_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			  uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

static int shca_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Memory windows                                                     */
/* ------------------------------------------------------------------ */

static struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int shca_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Address handles                                                    */
/* ------------------------------------------------------------------ */

static struct ibv_ah *shca_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct ushca_create_ah_resp resp = {};
	struct shca_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	/* Named by UD send WQEs (issue #3). */
	ah->ah_handle = resp.ah_handle;
	return &ah->ibv_ah;
}

static int shca_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(container_of(ibah, struct shca_ah, ibv_ah));
	return ret;
}

/* ------------------------------------------------------------------ */
/* Context                                                            */
/* ------------------------------------------------------------------ */

/*
 * Only implemented verbs are listed; everything else stays NULL so that
 * libibverbs answers EOPNOTSUPP through its own defaults
 * (verbs_init_context() installs them before verbs_set_ops() copies the
 * non-NULL entries below).
 */
static void shca_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops shca_ctx_ops = {
	.advise_mr = shca_advise_mr,
	.alloc_mw = shca_alloc_mw,
	.alloc_pd = shca_alloc_pd,
	.bind_mw = shca_bind_mw,
	.attach_mcast = shca_attach_mcast,
	.close_xrcd = shca_close_xrcd,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_cq_ex = shca_create_cq_ex,
	.create_flow = shca_create_flow,
	.create_qp = shca_create_qp,
	.create_qp_ex = shca_create_qp_ex,
	.create_rwq_ind_table = shca_create_rwq_ind_table,
	.create_srq = shca_create_srq,
	.create_srq_ex = shca_create_srq_ex,
	.create_wq = shca_create_wq,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_flow = shca_destroy_flow,
	.destroy_qp = shca_destroy_qp,
	.destroy_rwq_ind_table = shca_destroy_rwq_ind_table,
	.destroy_srq = shca_destroy_srq,
	.destroy_wq = shca_destroy_wq,
	.detach_mcast = shca_detach_mcast,
	.free_context = shca_free_context,
	.get_srq_num = shca_get_srq_num,
	.modify_cq = shca_modify_cq,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.modify_wq = shca_modify_wq,
	.open_qp = shca_open_qp,
	.open_xrcd = shca_open_xrcd,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_ops = shca_post_srq_ops,
	.post_srq_recv = shca_post_srq_recv,
	.query_device_ex = shca_query_device_ex,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_mr = shca_reg_mr,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_mr = shca_rereg_mr,
	.resize_cq = shca_resize_cq,
};

/* The kernel's limits must describe entries at least as big as ours. */
static int shca_check_ucontext_resp(const struct shca_alloc_ucontext_resp *r)
{
	if (r->abi_version != SHCA_UVERBS_ABI_VERSION ||
	    !(r->comp_mask & SHCA_UCONTEXT_RESP_CMASK_RINGS))
		return EPROTO;
	if ((1ULL << r->sq_entry_shift) < sizeof(struct shca_send_wqe) ||
	    (1ULL << r->rq_entry_shift) < sizeof(struct shca_recv_wqe) ||
	    (1ULL << r->cqe_shift) < sizeof(struct shca_cqe) ||
	    r->sq_entry_shift > 16 || r->rq_entry_shift > 16 ||
	    r->cqe_shift > 16)
		return EPROTO;
	return 0;
}

static struct verbs_context *shca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct ushca_alloc_ucontext cmd = {};
	struct ushca_alloc_ucontext_resp resp = {};
	struct shca_context *ctx;
	int ret;

	(void)private_data;
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = shca_check_ucontext_resp(&resp.drv_payload);
	if (ret) {
		verbs_err(&ctx->ibv_ctx, "ALLOC_UCONTEXT failed: %d\n", ret);
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	ctx->limits = resp.drv_payload;
	verbs_set_ops(&ctx->ibv_ctx, &shca_ctx_ops);
	return &ctx->ibv_ctx;
}

static void shca_free_context(struct ibv_context *ibctx)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/* ------------------------------------------------------------------ */
/* Registration                                                       */
/* ------------------------------------------------------------------ */

/*
 * An empty table rather than NULL: 44.0's try_drivers() walks the
 * match_table of every provider, without a NULL check, whenever some
 * device reports a driver_id other than RDMA_DRIVER_UNKNOWN (e.g. an rxe
 * or mlx5 device next to ours).  With only the sentinel nothing matches
 * by table and shca_match_device() alone decides.
 */
static const struct verbs_match_ent shca_match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops shca_dev_ops = {
	.name = "shca",
	.match_min_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SHCA_UVERBS_ABI_VERSION,
	.match_table = shca_match_table,
	.match_device = shca_match_device,
	.alloc_device = shca_alloc_device,
	.uninit_device = shca_uninit_device,
	.alloc_context = shca_alloc_context,
};

/*
 * rdma-core's PROVIDER_DRIVER() registers unconditionally; this constructor
 * does what it does (verbs_register_driver(), which names the private ABI
 * tag) only after the check below.  IBVERBS_PRIVATE_34 does not pin the
 * layouts of the structures we share with libibverbs (verbs_qp and
 * ibv_qp_ex grew under the same tag), so a provider built in one rdma-core
 * release must not run under another's libibverbs.  The refusal goes to
 * rdma-core's log (VERBS_LOG_LEVEL, VERBS_LOG_FILE) and, like libibverbs'
 * own warning about a provider it cannot load, to stderr.
 */
static void shca_refuse(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void shca_refuse(const char *fmt, ...)
{
	char msg[2 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__verbs_log(NULL, VERBS_LOG_ERR, "shca: %s; provider disabled\n", msg);
	fprintf(stderr, "libshca: Warning: %s; provider disabled\n", msg);
}

static __attribute__((constructor)) void shca_register_driver(void)
{
	char path[PATH_MAX];
	int ret;

	ret = shca_loaded_libibverbs(path, sizeof(path));
	if (ret) {
		shca_refuse("cannot locate the loaded libibverbs (%s)",
			    strerror(ret));
		return;
	}
	if (shca_check_libibverbs_path(path)) {
		shca_refuse("built for %s (rdma-core %s) but the loaded libibverbs is %s",
			    SHCA_LIBIBVERBS_FILE, SHCA_RDMA_CORE_VERSION, path);
		return;
	}
	verbs_register_driver(&shca_dev_ops);
}
