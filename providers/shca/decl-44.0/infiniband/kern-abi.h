/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca's own declaration of the part of rdma-core 44.0's private
 * infiniband/kern-abi.h that providers/shca uses: the write() command
 * structs the ibv_cmd_*() calls take, and DECLARE_DRV_CMD().  Used only
 * when no rdma-core 44.0 source tree can be had (scripts/rdma-core.sh
 * build 44.0, "decl" way); `scripts/rdma-core.sh compare 44.0` checks the
 * layouts against the real headers and layout.txt.
 */
#ifndef SHCA_DECL_KERN_ABI_H
#define SHCA_DECL_KERN_ABI_H

#include <assert.h>
#include <linux/types.h>
#include <rdma/ib_user_verbs.h>

#include <ccan/container_of.h>

/* The header of an extended command: the legacy one, then the ex one. */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

/*
 * For each command enum E the provider names, three facts:
 *   shca_decl_req_E    the whole request (header + core request), the
 *                      struct the matching ibv_cmd_*() takes;
 *   shca_decl_resp_E   the kernel's core response;
 *   shca_decl_align_E  the length granularity of the command (4 for
 *                      legacy commands, 8 for extended ones).
 * The request struct is named as rdma-core names it (struct ibv_<name>),
 * with the header as 'hdr' and the kernel's request as 'core_payload'.
 */
#define SHCA_DECL_CMD(_enum, _name, _hdr, _align, _kreq, _kresp)               \
	struct _name {                                                         \
		_hdr hdr;                                                      \
		struct _kreq core_payload;                                     \
	};                                                                     \
	typedef struct _name shca_decl_req_##_enum;                            \
	typedef struct _kresp shca_decl_resp_##_enum;                          \
	enum { shca_decl_align_##_enum = (_align) };                           \
	static_assert(sizeof(struct _name) ==                                  \
			      sizeof(_hdr) + sizeof(struct _kreq),             \
		      #_name ": padding between header and request")

/* Legacy write() commands: struct ib_uverbs_cmd_hdr, 4-byte granular. */
#define SHCA_DECL_LEGACY(_enum, _name, _kreq, _kresp)                          \
	SHCA_DECL_CMD(_enum, _name, struct ib_uverbs_cmd_hdr, 4, _kreq, _kresp)
/* Extended commands: struct ex_hdr, 8-byte granular. */
#define SHCA_DECL_EX(_enum, _name, _kreq, _kresp)                              \
	SHCA_DECL_CMD(_enum, _name, struct ex_hdr, 8, _kreq, _kresp)

/* No driver data in one direction: DECLARE_DRV_CMD(..., empty, ...). */
struct empty {};
#define _STRUCT_empty struct {}

SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_GET_CONTEXT, ibv_get_context,
		 ib_uverbs_get_context, ib_uverbs_get_context_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_QUERY_PORT, ibv_query_port,
		 ib_uverbs_query_port, ib_uverbs_query_port_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_ALLOC_PD, ibv_alloc_pd,
		 ib_uverbs_alloc_pd, ib_uverbs_alloc_pd_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_OPEN_XRCD, ibv_open_xrcd,
		 ib_uverbs_open_xrcd, ib_uverbs_open_xrcd_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_REG_MR, ibv_reg_mr,
		 ib_uverbs_reg_mr, ib_uverbs_reg_mr_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_REREG_MR, ibv_rereg_mr,
		 ib_uverbs_rereg_mr, ib_uverbs_rereg_mr_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_ALLOC_MW, ibv_alloc_mw,
		 ib_uverbs_alloc_mw, ib_uverbs_alloc_mw_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_CREATE_AH, ibv_create_ah,
		 ib_uverbs_create_ah, ib_uverbs_create_ah_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_CREATE_CQ, ibv_create_cq,
		 ib_uverbs_create_cq, ib_uverbs_create_cq_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_RESIZE_CQ, ibv_resize_cq,
		 ib_uverbs_resize_cq, ib_uverbs_resize_cq_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_CREATE_QP, ibv_create_qp,
		 ib_uverbs_create_qp, ib_uverbs_create_qp_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_OPEN_QP, ibv_open_qp,
		 ib_uverbs_open_qp, ib_uverbs_create_qp_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_QUERY_QP, ibv_query_qp,
		 ib_uverbs_query_qp, ib_uverbs_query_qp_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_MODIFY_QP, ibv_modify_qp,
		 ib_uverbs_modify_qp, empty);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_CREATE_SRQ, ibv_create_srq,
		 ib_uverbs_create_srq, ib_uverbs_create_srq_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_CREATE_XSRQ, ibv_create_xsrq,
		 ib_uverbs_create_xsrq, ib_uverbs_create_srq_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_MODIFY_SRQ, ibv_modify_srq,
		 ib_uverbs_modify_srq, empty);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_QUERY_SRQ, ibv_query_srq,
		 ib_uverbs_query_srq, ib_uverbs_query_srq_resp);
SHCA_DECL_LEGACY(IB_USER_VERBS_CMD_POST_SEND, ibv_post_send,
		 ib_uverbs_post_send, ib_uverbs_post_send_resp);

SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, ibv_query_device_ex,
	     ib_uverbs_ex_query_device, ib_uverbs_ex_query_device_resp);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_CREATE_CQ, ibv_create_cq_ex,
	     ib_uverbs_ex_create_cq, ib_uverbs_ex_create_cq_resp);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_MODIFY_CQ, ibv_modify_cq,
	     ib_uverbs_ex_modify_cq, empty);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_CREATE_QP, ibv_create_qp_ex,
	     ib_uverbs_ex_create_qp, ib_uverbs_ex_create_qp_resp);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_MODIFY_QP, ibv_modify_qp_ex,
	     ib_uverbs_ex_modify_qp, ib_uverbs_ex_modify_qp_resp);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_CREATE_WQ, ibv_create_wq,
	     ib_uverbs_ex_create_wq, ib_uverbs_ex_create_wq_resp);
SHCA_DECL_EX(IB_USER_VERBS_EX_CMD_MODIFY_WQ, ibv_modify_wq,
	     ib_uverbs_ex_modify_wq, empty);

/*
 * A provider command with driver data: struct _name is the core request
 * followed by struct _kreq, struct _name##_resp the core response followed
 * by struct _kresp.  The driver structs' members are reachable directly
 * (from the _STRUCT_ macros of <kernel-abi/shca-abi.h>) and as a whole as
 * drv_payload.  The asserts refuse any implicit padding, which would put
 * the driver data somewhere the kernel does not look for it.
 */
#define DECLARE_DRV_CMD(_name, _enum, _kreq, _kresp)                           \
	struct _name {                                                         \
		shca_decl_req_##_enum ibv_cmd;                                 \
		union {                                                        \
			_STRUCT_##_kreq;                                       \
			struct _kreq drv_payload;                              \
		};                                                             \
	};                                                                     \
	struct _name##_resp {                                                  \
		shca_decl_resp_##_enum ibv_resp;                               \
		union {                                                        \
			_STRUCT_##_kresp;                                      \
			struct _kresp drv_payload;                             \
		};                                                             \
	};                                                                     \
	static_assert(sizeof(struct _name) ==                                  \
			      sizeof(shca_decl_req_##_enum) +                  \
				      sizeof(struct _kreq) &&                  \
			      sizeof(struct _name) %                           \
					      shca_decl_align_##_enum ==       \
				      0,                                       \
		      #_name ": request padded");                              \
	static_assert(sizeof(struct _name##_resp) ==                           \
			      sizeof(shca_decl_resp_##_enum) +                 \
				      sizeof(struct _kresp) &&                 \
			      sizeof(struct _name##_resp) %                    \
					      shca_decl_align_##_enum ==       \
				      0,                                       \
		      #_name ": response padded")

#endif
