/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layout probe for `scripts/rdma-core.sh compare`: prints the size of every
 * rdma-core private struct providers/shca uses and the offset and size of
 * their members, one "struct member offset size" row each ("struct SIZEOF
 * size" for the whole), then the same for the provider's own
 * DECLARE_DRV_CMD() commands (rows starting with ushca_).  Compiled once
 * against shca's declarations (decl-44.0/) and once against the real
 * rdma-core tree's headers; the outputs must be equal, and the rows not
 * starting with ushca_ must equal decl-44.0/layout.txt.
 */
#include <stdio.h>

#include "shca.h"

/* As in wq.c (file-local there). */
DECLARE_DRV_CMD(ushca_create_wq, IB_USER_VERBS_EX_CMD_CREATE_WQ,
		shca_create_wq_req, shca_create_wq_resp);
DECLARE_DRV_CMD(ushca_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		shca_create_qp_req, shca_create_qp_resp);

#define M(s, m)                                                                \
	printf("%-24s %-28s %5zu %3zu\n", #s, #m, offsetof(struct s, m),       \
	       sizeof(((struct s *)0)->m))
#define S(s) printf("%-24s %-28s %5zu\n", #s, "SIZEOF", sizeof(struct s))
/* A driver command: its core part, its driver part, both directions. */
#define D(s)                                                                   \
	do {                                                                   \
		M(s, ibv_cmd);                                                 \
		M(s, drv_payload);                                             \
		S(s);                                                          \
		M(s##_resp, ibv_resp);                                         \
		M(s##_resp, drv_payload);                                      \
		S(s##_resp);                                                   \
	} while (0)

int main(void)
{
	M(verbs_match_ent, driver_data);
	M(verbs_match_ent, u);
	M(verbs_match_ent, vendor);
	M(verbs_match_ent, device);
	M(verbs_match_ent, kind);
	M(verbs_sysfs_dev, entry);
	M(verbs_sysfs_dev, provider_data);
	M(verbs_sysfs_dev, match);
	M(verbs_sysfs_dev, flags);
	M(verbs_sysfs_dev, sysfs_name);
	M(verbs_sysfs_dev, sysfs_cdev);
	M(verbs_sysfs_dev, ibdev_name);
	M(verbs_sysfs_dev, ibdev_path);
	M(verbs_sysfs_dev, modalias);
	M(verbs_sysfs_dev, node_guid);
	M(verbs_sysfs_dev, driver_id);
	M(verbs_sysfs_dev, node_type);
	M(verbs_sysfs_dev, ibdev_idx);
	M(verbs_sysfs_dev, num_ports);
	M(verbs_sysfs_dev, abi_ver);
	M(verbs_sysfs_dev, time_created);
	M(verbs_device_ops, name);
	M(verbs_device_ops, match_min_abi_version);
	M(verbs_device_ops, match_max_abi_version);
	M(verbs_device_ops, match_table);
	M(verbs_device_ops, static_providers);
	M(verbs_device_ops, match_device);
	M(verbs_device_ops, alloc_context);
	M(verbs_device_ops, import_context);
	M(verbs_device_ops, alloc_device);
	M(verbs_device_ops, uninit_device);
	M(verbs_device, device);
	M(verbs_device, ops);
	M(verbs_device, refcount);
	M(verbs_device, entry);
	M(verbs_device, sysfs);
	M(verbs_device, core_support);
	M(verbs_xrcd, xrcd);
	M(verbs_xrcd, comp_mask);
	M(verbs_xrcd, handle);
	M(verbs_srq, srq);
	M(verbs_srq, srq_type);
	M(verbs_srq, xrcd);
	M(verbs_srq, cq);
	M(verbs_srq, srq_num);
	M(verbs_qp, qp);
	M(verbs_qp, qp_ex);
	M(verbs_qp, comp_mask);
	M(verbs_qp, xrcd);
	M(verbs_cq, cq);
	M(verbs_cq, cq_ex);
	M(verbs_mr, ibv_mr);
	M(verbs_mr, mr_type);
	M(verbs_mr, access);
	M(verbs_context_ops, advise_mr);
	M(verbs_context_ops, alloc_dm);
	M(verbs_context_ops, alloc_mw);
	M(verbs_context_ops, alloc_null_mr);
	M(verbs_context_ops, alloc_parent_domain);
	M(verbs_context_ops, alloc_pd);
	M(verbs_context_ops, alloc_td);
	M(verbs_context_ops, async_event);
	M(verbs_context_ops, attach_counters_point_flow);
	M(verbs_context_ops, attach_mcast);
	M(verbs_context_ops, bind_mw);
	M(verbs_context_ops, close_xrcd);
	M(verbs_context_ops, cq_event);
	M(verbs_context_ops, create_ah);
	M(verbs_context_ops, create_counters);
	M(verbs_context_ops, create_cq);
	M(verbs_context_ops, create_cq_ex);
	M(verbs_context_ops, create_flow);
	M(verbs_context_ops, create_flow_action_esp);
	M(verbs_context_ops, create_qp);
	M(verbs_context_ops, create_qp_ex);
	M(verbs_context_ops, create_rwq_ind_table);
	M(verbs_context_ops, create_srq);
	M(verbs_context_ops, create_srq_ex);
	M(verbs_context_ops, create_wq);
	M(verbs_context_ops, dealloc_mw);
	M(verbs_context_ops, dealloc_pd);
	M(verbs_context_ops, dealloc_td);
	M(verbs_context_ops, dereg_mr);
	M(verbs_context_ops, destroy_ah);
	M(verbs_context_ops, destroy_counters);
	M(verbs_context_ops, destroy_cq);
	M(verbs_context_ops, destroy_flow);
	M(verbs_context_ops, destroy_flow_action);
	M(verbs_context_ops, destroy_qp);
	M(verbs_context_ops, destroy_rwq_ind_table);
	M(verbs_context_ops, destroy_srq);
	M(verbs_context_ops, destroy_wq);
	M(verbs_context_ops, detach_mcast);
	M(verbs_context_ops, free_context);
	M(verbs_context_ops, free_dm);
	M(verbs_context_ops, get_srq_num);
	M(verbs_context_ops, import_dm);
	M(verbs_context_ops, import_mr);
	M(verbs_context_ops, import_pd);
	M(verbs_context_ops, modify_cq);
	M(verbs_context_ops, modify_flow_action_esp);
	M(verbs_context_ops, modify_qp);
	M(verbs_context_ops, modify_qp_rate_limit);
	M(verbs_context_ops, modify_srq);
	M(verbs_context_ops, modify_wq);
	M(verbs_context_ops, open_qp);
	M(verbs_context_ops, open_xrcd);
	M(verbs_context_ops, poll_cq);
	M(verbs_context_ops, post_recv);
	M(verbs_context_ops, post_send);
	M(verbs_context_ops, post_srq_ops);
	M(verbs_context_ops, post_srq_recv);
	M(verbs_context_ops, query_device_ex);
	M(verbs_context_ops, query_ece);
	M(verbs_context_ops, query_port);
	M(verbs_context_ops, query_qp);
	M(verbs_context_ops, query_qp_data_in_order);
	M(verbs_context_ops, query_rt_values);
	M(verbs_context_ops, query_srq);
	M(verbs_context_ops, read_counters);
	M(verbs_context_ops, reg_dm_mr);
	M(verbs_context_ops, reg_dmabuf_mr);
	M(verbs_context_ops, reg_mr);
	M(verbs_context_ops, req_notify_cq);
	M(verbs_context_ops, rereg_mr);
	M(verbs_context_ops, resize_cq);
	M(verbs_context_ops, set_ece);
	M(verbs_context_ops, unimport_dm);
	M(verbs_context_ops, unimport_mr);
	M(verbs_context_ops, unimport_pd);
	M(ibv_get_context, hdr);
	M(ibv_get_context, core_payload);
	M(ibv_query_port, hdr);
	M(ibv_query_port, core_payload);
	M(ibv_alloc_pd, hdr);
	M(ibv_alloc_pd, core_payload);
	M(ibv_open_xrcd, hdr);
	M(ibv_open_xrcd, core_payload);
	M(ibv_reg_mr, hdr);
	M(ibv_reg_mr, core_payload);
	M(ibv_rereg_mr, hdr);
	M(ibv_rereg_mr, core_payload);
	M(ibv_alloc_mw, hdr);
	M(ibv_alloc_mw, core_payload);
	M(ibv_create_cq, hdr);
	M(ibv_create_cq, core_payload);
	M(ibv_resize_cq, hdr);
	M(ibv_resize_cq, core_payload);
	M(ibv_create_qp, hdr);
	M(ibv_create_qp, core_payload);
	M(ibv_open_qp, hdr);
	M(ibv_open_qp, core_payload);
	M(ibv_query_qp, hdr);
	M(ibv_query_qp, core_payload);
	M(ibv_modify_qp, hdr);
	M(ibv_modify_qp, core_payload);
	M(ibv_create_srq, hdr);
	M(ibv_create_srq, core_payload);
	M(ibv_create_xsrq, hdr);
	M(ibv_create_xsrq, core_payload);
	M(ibv_modify_srq, hdr);
	M(ibv_modify_srq, core_payload);
	M(ibv_query_srq, hdr);
	M(ibv_query_srq, core_payload);
	M(ibv_post_send, hdr);
	M(ibv_post_send, core_payload);
	M(ibv_create_cq_ex, hdr);
	M(ibv_create_cq_ex, core_payload);
	M(ibv_create_qp_ex, hdr);
	M(ibv_create_qp_ex, core_payload);
	M(ibv_modify_qp_ex, hdr);
	M(ibv_modify_qp_ex, core_payload);
	M(ibv_create_wq, hdr);
	M(ibv_create_wq, core_payload);
	M(ibv_modify_wq, hdr);
	M(ibv_modify_wq, core_payload);
	M(ibv_query_device_ex, hdr);
	M(ibv_query_device_ex, core_payload);
	S(ibv_get_context);
	S(ibv_query_port);
	S(ibv_alloc_pd);
	S(ibv_open_xrcd);
	S(ibv_reg_mr);
	S(ibv_rereg_mr);
	S(ibv_alloc_mw);
	S(ibv_create_cq);
	S(ibv_resize_cq);
	S(ibv_create_qp);
	S(ibv_open_qp);
	S(ibv_query_qp);
	S(ibv_modify_qp);
	S(ibv_create_srq);
	S(ibv_create_xsrq);
	S(ibv_modify_srq);
	S(ibv_query_srq);
	S(ibv_post_send);
	S(ibv_create_cq_ex);
	S(ibv_create_qp_ex);
	S(ibv_modify_qp_ex);
	S(ibv_create_wq);
	S(ibv_modify_wq);
	S(ibv_query_device_ex);
	S(verbs_match_ent);
	S(verbs_sysfs_dev);
	S(verbs_device_ops);
	S(verbs_device);
	S(verbs_xrcd);
	S(verbs_srq);
	S(verbs_qp);
	S(verbs_cq);
	S(verbs_mr);
	S(verbs_context_ops);
	S(ex_hdr);
	S(ib_uverbs_get_context_resp);
	S(ib_uverbs_query_port_resp);
	S(ib_uverbs_alloc_pd_resp);
	S(ib_uverbs_open_xrcd_resp);
	S(ib_uverbs_reg_mr_resp);
	S(ib_uverbs_rereg_mr_resp);
	S(ib_uverbs_alloc_mw_resp);
	S(ib_uverbs_create_ah_resp);
	S(ib_uverbs_ex_create_cq_resp);
	S(ib_uverbs_resize_cq_resp);
	S(ib_uverbs_create_qp_resp);
	S(ib_uverbs_ex_create_qp_resp);
	S(ib_uverbs_create_srq_resp);
	S(ib_uverbs_ex_create_wq_resp);
	S(ib_uverbs_ex_create_rwq_ind_table_resp);
	S(ib_uverbs_ex_query_device_resp);
	D(ushca_alloc_ucontext);
	D(ushca_alloc_pd);
	D(ushca_create_ah);
	D(ushca_create_cq);
	D(ushca_resize_cq);
	D(ushca_create_qp);
	D(ushca_create_srq);
	D(ushca_create_xsrq);
	D(ushca_modify_srq);
	D(ushca_create_wq);
	D(ushca_create_qp_ex);
	return 0;
}
