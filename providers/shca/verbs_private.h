/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Declarations of rdma-core 44.0's private provider interface
 * (libibverbs.so.1, symbol version IBVERBS_PRIVATE_34).
 *
 * rdma-core does not install libibverbs/driver.h or kern-abi.h, so the
 * shca provider declares what it uses here.  The layouts below are written
 * from the measured facts of rdma-core 44.0 on x86_64 and every offset and
 * size of those facts is checked by a static_assert at the end of this
 * file.  IBVERBS_PRIVATE_34 does not pin these layouts (verbs_context_ops
 * grew while the tag stayed 34), which is why shca.c refuses to register
 * with any libibverbs other than 44.0.
 */
#ifndef SHCA_VERBS_PRIVATE_H
#define SHCA_VERBS_PRIVATE_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>

#if !defined(__x86_64__)
#error "the layouts below were measured on x86_64 only"
#endif

/* ccan's struct list_node: two pointers. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* ------------------------------------------------------------------ */
/* Logging (__verbs_log is exported; the verbs_* wrappers are macros)  */
/* ------------------------------------------------------------------ */

enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* errno is preserved so a log call never clobbers an error being returned */
#define verbs_log(ctx, level, fmt, ...)                                        \
	do {                                                                   \
		int verbs_log_errno = errno;                                   \
		__verbs_log(ctx, level, "%s: %s:%d: " fmt,                     \
			    (ctx)->context.device->name, __func__, __LINE__,   \
			    ##__VA_ARGS__);                                    \
		errno = verbs_log_errno;                                       \
	} while (0)

#define verbs_err(ctx, fmt, ...) verbs_log(ctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define verbs_debug(ctx, fmt, ...)                                             \
	verbs_log(ctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* Objects                                                            */
/* ------------------------------------------------------------------ */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* ------------------------------------------------------------------ */
/* Device discovery                                                   */
/* ------------------------------------------------------------------ */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev {
	struct verbs_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ------------------------------------------------------------------ */
/* Context ops: 76 members, sorted, as in 44.0                         */
/* ------------------------------------------------------------------ */

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
				struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
				struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ------------------------------------------------------------------ */
/* Write-command buffers: header, then the kernel's request struct     */
/* ------------------------------------------------------------------ */

struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define SHCA_DECLARE_CMD(_name, _kabi)                                         \
	struct _name {                                                         \
		struct ib_uverbs_cmd_hdr hdr;                                  \
		struct _kabi core_payload;                                     \
	}

#define SHCA_DECLARE_CMD_EX(_name, _kabi)                                      \
	struct _name {                                                         \
		struct ex_hdr hdr;                                             \
		struct _kabi core_payload;                                     \
	}

SHCA_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
SHCA_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
SHCA_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
SHCA_DECLARE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
SHCA_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SHCA_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SHCA_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
SHCA_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
SHCA_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SHCA_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
SHCA_DECLARE_CMD(ibv_open_qp, ib_uverbs_open_qp);
SHCA_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
SHCA_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SHCA_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
SHCA_DECLARE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
SHCA_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SHCA_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
SHCA_DECLARE_CMD(ibv_post_send, ib_uverbs_post_send);
SHCA_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
SHCA_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
SHCA_DECLARE_CMD_EX(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);
SHCA_DECLARE_CMD_EX(ibv_modify_cq, ib_uverbs_ex_modify_cq);
SHCA_DECLARE_CMD_EX(ibv_create_wq, ib_uverbs_ex_create_wq);
SHCA_DECLARE_CMD_EX(ibv_modify_wq, ib_uverbs_ex_modify_wq);
SHCA_DECLARE_CMD_EX(ibv_query_device_ex, ib_uverbs_ex_query_device);

/* ------------------------------------------------------------------ */
/* Exported entry points (IBVERBS_PRIVATE_34) used by this provider    */
/* ------------------------------------------------------------------ */

void verbs_register_driver_34(const struct verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* ------------------------------------------------------------------ */
/* Layout checks against the rdma-core 44.0 x86_64 facts               */
/* ------------------------------------------------------------------ */

#define SHCA_ABI_FIELD(_s, _f, _off, _size)                                    \
	static_assert(offsetof(struct _s, _f) == (_off) &&                     \
		      sizeof(((struct _s *)0)->_f) == (_size),                 \
		      #_s "." #_f " differs from rdma-core 44.0")
#define SHCA_ABI_SIZE(_s, _size)                                               \
	static_assert(sizeof(struct _s) == (_size),                            \
		      "sizeof(" #_s ") differs from rdma-core 44.0")

SHCA_ABI_FIELD(verbs_match_ent, driver_data, 0, 8);
SHCA_ABI_FIELD(verbs_match_ent, u, 8, 8);
SHCA_ABI_FIELD(verbs_match_ent, vendor, 16, 2);
SHCA_ABI_FIELD(verbs_match_ent, device, 18, 2);
SHCA_ABI_FIELD(verbs_match_ent, kind, 20, 1);
SHCA_ABI_FIELD(verbs_sysfs_dev, entry, 0, 16);
SHCA_ABI_FIELD(verbs_sysfs_dev, provider_data, 16, 8);
SHCA_ABI_FIELD(verbs_sysfs_dev, match, 24, 8);
SHCA_ABI_FIELD(verbs_sysfs_dev, flags, 32, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, sysfs_name, 36, 64);
SHCA_ABI_FIELD(verbs_sysfs_dev, sysfs_cdev, 104, 8);
SHCA_ABI_FIELD(verbs_sysfs_dev, ibdev_name, 112, 64);
SHCA_ABI_FIELD(verbs_sysfs_dev, ibdev_path, 176, 256);
SHCA_ABI_FIELD(verbs_sysfs_dev, modalias, 432, 512);
SHCA_ABI_FIELD(verbs_sysfs_dev, node_guid, 944, 8);
SHCA_ABI_FIELD(verbs_sysfs_dev, driver_id, 952, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, node_type, 956, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, ibdev_idx, 960, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, num_ports, 964, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, abi_ver, 968, 4);
SHCA_ABI_FIELD(verbs_sysfs_dev, time_created, 976, 16);
SHCA_ABI_FIELD(verbs_device_ops, name, 0, 8);
SHCA_ABI_FIELD(verbs_device_ops, match_min_abi_version, 8, 4);
SHCA_ABI_FIELD(verbs_device_ops, match_max_abi_version, 12, 4);
SHCA_ABI_FIELD(verbs_device_ops, match_table, 16, 8);
SHCA_ABI_FIELD(verbs_device_ops, static_providers, 24, 8);
SHCA_ABI_FIELD(verbs_device_ops, match_device, 32, 8);
SHCA_ABI_FIELD(verbs_device_ops, alloc_context, 40, 8);
SHCA_ABI_FIELD(verbs_device_ops, import_context, 48, 8);
SHCA_ABI_FIELD(verbs_device_ops, alloc_device, 56, 8);
SHCA_ABI_FIELD(verbs_device_ops, uninit_device, 64, 8);
SHCA_ABI_FIELD(verbs_device, device, 0, 664);
SHCA_ABI_FIELD(verbs_device, ops, 664, 8);
SHCA_ABI_FIELD(verbs_device, refcount, 672, 4);
SHCA_ABI_FIELD(verbs_device, entry, 680, 16);
SHCA_ABI_FIELD(verbs_device, sysfs, 696, 8);
SHCA_ABI_FIELD(verbs_device, core_support, 704, 8);
SHCA_ABI_FIELD(verbs_xrcd, xrcd, 0, 8);
SHCA_ABI_FIELD(verbs_xrcd, comp_mask, 8, 4);
SHCA_ABI_FIELD(verbs_xrcd, handle, 12, 4);
SHCA_ABI_FIELD(verbs_srq, srq, 0, 128);
SHCA_ABI_FIELD(verbs_srq, srq_type, 128, 4);
SHCA_ABI_FIELD(verbs_srq, xrcd, 136, 8);
SHCA_ABI_FIELD(verbs_srq, cq, 144, 8);
SHCA_ABI_FIELD(verbs_srq, srq_num, 152, 4);
SHCA_ABI_FIELD(verbs_qp, qp, 0, 160);
SHCA_ABI_FIELD(verbs_qp, qp_ex, 0, 352);
SHCA_ABI_FIELD(verbs_qp, comp_mask, 352, 4);
SHCA_ABI_FIELD(verbs_qp, xrcd, 360, 8);
SHCA_ABI_FIELD(verbs_cq, cq, 0, 128);
SHCA_ABI_FIELD(verbs_cq, cq_ex, 0, 288);
SHCA_ABI_FIELD(verbs_mr, ibv_mr, 0, 48);
SHCA_ABI_FIELD(verbs_mr, mr_type, 48, 4);
SHCA_ABI_FIELD(verbs_mr, access, 52, 4);
SHCA_ABI_FIELD(verbs_context_ops, advise_mr, 0, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_dm, 8, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_mw, 16, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_null_mr, 24, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_parent_domain, 32, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_pd, 40, 8);
SHCA_ABI_FIELD(verbs_context_ops, alloc_td, 48, 8);
SHCA_ABI_FIELD(verbs_context_ops, async_event, 56, 8);
SHCA_ABI_FIELD(verbs_context_ops, attach_counters_point_flow, 64, 8);
SHCA_ABI_FIELD(verbs_context_ops, attach_mcast, 72, 8);
SHCA_ABI_FIELD(verbs_context_ops, bind_mw, 80, 8);
SHCA_ABI_FIELD(verbs_context_ops, close_xrcd, 88, 8);
SHCA_ABI_FIELD(verbs_context_ops, cq_event, 96, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_ah, 104, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_counters, 112, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_cq, 120, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_cq_ex, 128, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_flow, 136, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_flow_action_esp, 144, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_qp, 152, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_qp_ex, 160, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_rwq_ind_table, 168, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_srq, 176, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_srq_ex, 184, 8);
SHCA_ABI_FIELD(verbs_context_ops, create_wq, 192, 8);
SHCA_ABI_FIELD(verbs_context_ops, dealloc_mw, 200, 8);
SHCA_ABI_FIELD(verbs_context_ops, dealloc_pd, 208, 8);
SHCA_ABI_FIELD(verbs_context_ops, dealloc_td, 216, 8);
SHCA_ABI_FIELD(verbs_context_ops, dereg_mr, 224, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_ah, 232, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_counters, 240, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_cq, 248, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_flow, 256, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_flow_action, 264, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_qp, 272, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_rwq_ind_table, 280, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_srq, 288, 8);
SHCA_ABI_FIELD(verbs_context_ops, destroy_wq, 296, 8);
SHCA_ABI_FIELD(verbs_context_ops, detach_mcast, 304, 8);
SHCA_ABI_FIELD(verbs_context_ops, free_context, 312, 8);
SHCA_ABI_FIELD(verbs_context_ops, free_dm, 320, 8);
SHCA_ABI_FIELD(verbs_context_ops, get_srq_num, 328, 8);
SHCA_ABI_FIELD(verbs_context_ops, import_dm, 336, 8);
SHCA_ABI_FIELD(verbs_context_ops, import_mr, 344, 8);
SHCA_ABI_FIELD(verbs_context_ops, import_pd, 352, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_cq, 360, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_flow_action_esp, 368, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_qp, 376, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_qp_rate_limit, 384, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_srq, 392, 8);
SHCA_ABI_FIELD(verbs_context_ops, modify_wq, 400, 8);
SHCA_ABI_FIELD(verbs_context_ops, open_qp, 408, 8);
SHCA_ABI_FIELD(verbs_context_ops, open_xrcd, 416, 8);
SHCA_ABI_FIELD(verbs_context_ops, poll_cq, 424, 8);
SHCA_ABI_FIELD(verbs_context_ops, post_recv, 432, 8);
SHCA_ABI_FIELD(verbs_context_ops, post_send, 440, 8);
SHCA_ABI_FIELD(verbs_context_ops, post_srq_ops, 448, 8);
SHCA_ABI_FIELD(verbs_context_ops, post_srq_recv, 456, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_device_ex, 464, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_ece, 472, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_port, 480, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_qp, 488, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_qp_data_in_order, 496, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_rt_values, 504, 8);
SHCA_ABI_FIELD(verbs_context_ops, query_srq, 512, 8);
SHCA_ABI_FIELD(verbs_context_ops, read_counters, 520, 8);
SHCA_ABI_FIELD(verbs_context_ops, reg_dm_mr, 528, 8);
SHCA_ABI_FIELD(verbs_context_ops, reg_dmabuf_mr, 536, 8);
SHCA_ABI_FIELD(verbs_context_ops, reg_mr, 544, 8);
SHCA_ABI_FIELD(verbs_context_ops, req_notify_cq, 552, 8);
SHCA_ABI_FIELD(verbs_context_ops, rereg_mr, 560, 8);
SHCA_ABI_FIELD(verbs_context_ops, resize_cq, 568, 8);
SHCA_ABI_FIELD(verbs_context_ops, set_ece, 576, 8);
SHCA_ABI_FIELD(verbs_context_ops, unimport_dm, 584, 8);
SHCA_ABI_FIELD(verbs_context_ops, unimport_mr, 592, 8);
SHCA_ABI_FIELD(verbs_context_ops, unimport_pd, 600, 8);
SHCA_ABI_FIELD(ibv_get_context, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_get_context, core_payload, 8, 8);
SHCA_ABI_SIZE(ibv_get_context, 16);
SHCA_ABI_FIELD(ibv_query_port, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_query_port, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_query_port, 24);
SHCA_ABI_FIELD(ibv_alloc_pd, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_alloc_pd, core_payload, 8, 8);
SHCA_ABI_SIZE(ibv_alloc_pd, 16);
SHCA_ABI_FIELD(ibv_open_xrcd, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_open_xrcd, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_open_xrcd, 24);
SHCA_ABI_FIELD(ibv_reg_mr, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_reg_mr, core_payload, 8, 40);
SHCA_ABI_SIZE(ibv_reg_mr, 48);
SHCA_ABI_FIELD(ibv_rereg_mr, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_rereg_mr, core_payload, 8, 48);
SHCA_ABI_SIZE(ibv_rereg_mr, 56);
SHCA_ABI_FIELD(ibv_alloc_mw, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_alloc_mw, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_alloc_mw, 24);
SHCA_ABI_FIELD(ibv_create_cq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_create_cq, core_payload, 8, 32);
SHCA_ABI_SIZE(ibv_create_cq, 40);
SHCA_ABI_FIELD(ibv_resize_cq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_resize_cq, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_resize_cq, 24);
SHCA_ABI_FIELD(ibv_create_qp, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_create_qp, core_payload, 8, 56);
SHCA_ABI_SIZE(ibv_create_qp, 64);
SHCA_ABI_FIELD(ibv_open_qp, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_open_qp, core_payload, 8, 32);
SHCA_ABI_SIZE(ibv_open_qp, 40);
SHCA_ABI_FIELD(ibv_query_qp, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_query_qp, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_query_qp, 24);
SHCA_ABI_FIELD(ibv_modify_qp, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_modify_qp, core_payload, 8, 112);
SHCA_ABI_SIZE(ibv_modify_qp, 120);
SHCA_ABI_FIELD(ibv_create_srq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_create_srq, core_payload, 8, 32);
SHCA_ABI_SIZE(ibv_create_srq, 40);
SHCA_ABI_FIELD(ibv_create_xsrq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_create_xsrq, core_payload, 8, 48);
SHCA_ABI_SIZE(ibv_create_xsrq, 56);
SHCA_ABI_FIELD(ibv_modify_srq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_modify_srq, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_modify_srq, 24);
SHCA_ABI_FIELD(ibv_query_srq, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_query_srq, core_payload, 8, 16);
SHCA_ABI_SIZE(ibv_query_srq, 24);
SHCA_ABI_FIELD(ibv_post_send, hdr, 0, 8);
SHCA_ABI_FIELD(ibv_post_send, core_payload, 8, 24);
SHCA_ABI_SIZE(ibv_post_send, 32);
SHCA_ABI_FIELD(ibv_create_cq_ex, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_create_cq_ex, core_payload, 24, 32);
SHCA_ABI_SIZE(ibv_create_cq_ex, 56);
SHCA_ABI_FIELD(ibv_create_qp_ex, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_create_qp_ex, core_payload, 24, 64);
SHCA_ABI_SIZE(ibv_create_qp_ex, 88);
SHCA_ABI_FIELD(ibv_modify_qp_ex, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_modify_qp_ex, core_payload, 24, 120);
SHCA_ABI_SIZE(ibv_modify_qp_ex, 144);
SHCA_ABI_FIELD(ibv_create_wq, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_create_wq, core_payload, 24, 40);
SHCA_ABI_SIZE(ibv_create_wq, 64);
SHCA_ABI_FIELD(ibv_modify_wq, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_modify_wq, core_payload, 24, 24);
SHCA_ABI_SIZE(ibv_modify_wq, 48);
SHCA_ABI_FIELD(ibv_query_device_ex, hdr, 0, 24);
SHCA_ABI_FIELD(ibv_query_device_ex, core_payload, 24, 8);
SHCA_ABI_SIZE(ibv_query_device_ex, 32);
SHCA_ABI_SIZE(verbs_match_ent, 24);
SHCA_ABI_SIZE(verbs_sysfs_dev, 992);
SHCA_ABI_SIZE(verbs_device_ops, 72);
SHCA_ABI_SIZE(verbs_device, 712);
SHCA_ABI_SIZE(verbs_xrcd, 16);
SHCA_ABI_SIZE(verbs_srq, 160);
SHCA_ABI_SIZE(verbs_qp, 368);
SHCA_ABI_SIZE(verbs_cq, 288);
SHCA_ABI_SIZE(verbs_mr, 56);
SHCA_ABI_SIZE(verbs_context_ops, 608);
SHCA_ABI_SIZE(ex_hdr, 24);

#endif /* SHCA_VERBS_PRIVATE_H */
