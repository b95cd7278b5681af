// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca KUnit: user ABI layout.  Every size and offset below is a literal,
 * so any change to include/uapi/rdma/shca-abi.h that moves a field fails
 * here first.
 */
#include <kunit/test.h>
#include <linux/stddef.h>
#include <rdma/shca-abi.h>

#define EXPECT_SIZE(test, name, size) \
	KUNIT_EXPECT_EQ(test, sizeof(struct name), (size_t)(size))
#define EXPECT_OFF(test, name, field, off) \
	KUNIT_EXPECT_EQ(test, offsetof(struct name, field), (size_t)(off))

static void shca_abi_ring_ctl_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_ring_ctl, 128);
	EXPECT_OFF(test, shca_ring_ctl, prod, 0);
	EXPECT_OFF(test, shca_ring_ctl, reserved_32, 4);
	EXPECT_OFF(test, shca_ring_ctl, cons, 64);
	EXPECT_OFF(test, shca_ring_ctl, flags, 68);
	EXPECT_OFF(test, shca_ring_ctl, arm, 72);
	EXPECT_OFF(test, shca_ring_ctl, reserved_608, 76);
	/* the arm word is in the consumer's cache line, beside cons */
	KUNIT_EXPECT_EQ(test, offsetof(struct shca_ring_ctl, arm) / 64,
			offsetof(struct shca_ring_ctl, cons) / 64);
	KUNIT_EXPECT_EQ(test, SHCA_CQ_ARM_NEXT, 1);
	KUNIT_EXPECT_EQ(test, SHCA_CQ_ARM_SOLICITED, 2);
	KUNIT_EXPECT_EQ(test, SHCA_CREATE_CQ_RESP_CMASK_ARM, 1);
}

static void shca_abi_sge_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_sge, 16);
	EXPECT_OFF(test, shca_sge, addr, 0);
	EXPECT_OFF(test, shca_sge, length, 8);
	EXPECT_OFF(test, shca_sge, lkey, 12);
}

static void shca_abi_wqe_rdma_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_wqe_rdma, 32);
	EXPECT_OFF(test, shca_wqe_rdma, remote_addr, 0);
	EXPECT_OFF(test, shca_wqe_rdma, rkey, 8);
	EXPECT_OFF(test, shca_wqe_rdma, reserved_96, 12);
	EXPECT_OFF(test, shca_wqe_rdma, reserved_128, 16);
	/* FLUSH: remote_addr and rkey where RDMA has them */
	EXPECT_SIZE(test, shca_wqe_flush, 32);
	EXPECT_OFF(test, shca_wqe_flush, remote_addr, 0);
	EXPECT_OFF(test, shca_wqe_flush, rkey, 8);
	EXPECT_OFF(test, shca_wqe_flush, type, 12);
	EXPECT_OFF(test, shca_wqe_flush, level, 13);
	EXPECT_OFF(test, shca_wqe_flush, reserved_112, 14);
	EXPECT_OFF(test, shca_wqe_flush, length, 16);
	EXPECT_OFF(test, shca_wqe_flush, reserved_192, 24);
	EXPECT_OFF(test, shca_send_wqe, flush, 24);
}

static void shca_abi_wqe_atomic_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_wqe_atomic, 32);
	EXPECT_OFF(test, shca_wqe_atomic, remote_addr, 0);
	EXPECT_OFF(test, shca_wqe_atomic, compare_add, 8);
	EXPECT_OFF(test, shca_wqe_atomic, swap, 16);
	EXPECT_OFF(test, shca_wqe_atomic, rkey, 24);
	EXPECT_OFF(test, shca_wqe_atomic, reserved_224, 28);
}

static void shca_abi_wqe_mem_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_wqe_bind_mw, 32);
	EXPECT_OFF(test, shca_wqe_bind_mw, addr, 0);
	EXPECT_OFF(test, shca_wqe_bind_mw, length, 8);
	EXPECT_OFF(test, shca_wqe_bind_mw, mr_lkey, 16);
	EXPECT_OFF(test, shca_wqe_bind_mw, mw_rkey, 20);
	EXPECT_OFF(test, shca_wqe_bind_mw, rkey, 24);
	EXPECT_OFF(test, shca_wqe_bind_mw, access, 28);
	EXPECT_SIZE(test, shca_wqe_reg_mr, 32);
	EXPECT_OFF(test, shca_wqe_reg_mr, iova, 0);
	EXPECT_OFF(test, shca_wqe_reg_mr, length, 8);
	EXPECT_OFF(test, shca_wqe_reg_mr, mr_key, 16);
	EXPECT_OFF(test, shca_wqe_reg_mr, key, 20);
	EXPECT_OFF(test, shca_wqe_reg_mr, access, 24);
	EXPECT_OFF(test, shca_wqe_reg_mr, page_shift, 28);
	EXPECT_OFF(test, shca_send_wqe, bind, 24);
	EXPECT_OFF(test, shca_send_wqe, reg, 24);
}

static void shca_abi_wqe_ud_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_wqe_ud, 32);
	EXPECT_OFF(test, shca_wqe_ud, ah_handle, 0);
	EXPECT_OFF(test, shca_wqe_ud, remote_qpn, 4);
	EXPECT_OFF(test, shca_wqe_ud, remote_qkey, 8);
	EXPECT_OFF(test, shca_wqe_ud, reserved_96, 12);
	EXPECT_OFF(test, shca_wqe_ud, reserved_128, 16);
}

static void shca_abi_send_wqe_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_send_wqe, 64);
	EXPECT_OFF(test, shca_send_wqe, wr_id, 0);
	EXPECT_OFF(test, shca_send_wqe, opcode, 8);
	EXPECT_OFF(test, shca_send_wqe, num_sge, 9);
	EXPECT_OFF(test, shca_send_wqe, flags, 10);
	EXPECT_OFF(test, shca_send_wqe, reserved_88, 11);
	EXPECT_OFF(test, shca_send_wqe, ex, 12);
	EXPECT_OFF(test, shca_send_wqe, inline_len, 16);
	EXPECT_OFF(test, shca_send_wqe, xrc_remote_srqn, 20);
	EXPECT_OFF(test, shca_send_wqe, rdma, 24);
	EXPECT_OFF(test, shca_send_wqe, atomic, 24);
	EXPECT_OFF(test, shca_send_wqe, ud, 24);
	EXPECT_OFF(test, shca_send_wqe, reserved_448, 56);
}

static void shca_abi_recv_wqe_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_recv_wqe, 16);
	EXPECT_OFF(test, shca_recv_wqe, wr_id, 0);
	EXPECT_OFF(test, shca_recv_wqe, num_sge, 8);
	EXPECT_OFF(test, shca_recv_wqe, reserved_96, 12);
}

static void shca_abi_cqe_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_cqe, 64);
	EXPECT_OFF(test, shca_cqe, wr_id, 0);
	EXPECT_OFF(test, shca_cqe, status, 8);
	EXPECT_OFF(test, shca_cqe, opcode, 9);
	EXPECT_OFF(test, shca_cqe, flags, 10);
	EXPECT_OFF(test, shca_cqe, sl, 11);
	EXPECT_OFF(test, shca_cqe, byte_len, 12);
	EXPECT_OFF(test, shca_cqe, qp_num, 16);
	EXPECT_OFF(test, shca_cqe, src_qp, 20);
	EXPECT_OFF(test, shca_cqe, imm_data, 24);
	EXPECT_OFF(test, shca_cqe, pkey_index, 28);
	EXPECT_OFF(test, shca_cqe, network_hdr_type, 30);
	EXPECT_OFF(test, shca_cqe, reserved_248, 31);
	EXPECT_OFF(test, shca_cqe, vendor_err, 32);
	EXPECT_OFF(test, shca_cqe, slid, 36);
	EXPECT_OFF(test, shca_cqe, dlid_path_bits, 38);
	EXPECT_OFF(test, shca_cqe, port_num, 39);
	EXPECT_OFF(test, shca_cqe, tm_tag, 40);
	EXPECT_OFF(test, shca_cqe, tm_flags, 48);
	EXPECT_OFF(test, shca_cqe, tm_handle, 50);
	EXPECT_OFF(test, shca_cqe, tm_app_ctx, 52);
	EXPECT_OFF(test, shca_cqe, tm_srqn, 56);
	EXPECT_OFF(test, shca_cqe, reserved_480, 60);
	EXPECT_OFF(test, shca_cqe, smac, 56);
	EXPECT_OFF(test, shca_cqe, vlan_id, 62);
}

static void shca_abi_alloc_ucontext_req_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_alloc_ucontext_req, 8);
	EXPECT_OFF(test, shca_alloc_ucontext_req, comp_mask, 0);
	EXPECT_OFF(test, shca_alloc_ucontext_req, reserved_32, 4);
}

static void shca_abi_alloc_ucontext_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_alloc_ucontext_resp, 48);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, abi_version, 4);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, max_sq_wr, 8);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, max_rq_wr, 12);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, max_sge, 16);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, max_inline_data, 20);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, max_cqe, 24);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, sq_entry_shift, 28);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, rq_entry_shift, 32);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, cqe_shift, 36);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, ctl_size, 40);
	EXPECT_OFF(test, shca_alloc_ucontext_resp, reserved_352, 44);
}

static void shca_abi_alloc_pd_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_alloc_pd_resp, 8);
	EXPECT_OFF(test, shca_alloc_pd_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_alloc_pd_resp, pdn, 4);
}

static void shca_abi_ring_info_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_ring_info, 40);
	EXPECT_OFF(test, shca_ring_info, mmap_key, 0);
	EXPECT_OFF(test, shca_ring_info, mmap_len, 8);
	EXPECT_OFF(test, shca_ring_info, ctl_offset, 16);
	EXPECT_OFF(test, shca_ring_info, entries_offset, 20);
	EXPECT_OFF(test, shca_ring_info, entries, 24);
	EXPECT_OFF(test, shca_ring_info, entry_shift, 28);
	EXPECT_OFF(test, shca_ring_info, chunk_shift, 32);
	EXPECT_OFF(test, shca_ring_info, reserved_288, 36);
}

static void shca_abi_create_cq_req_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_cq_req, 8);
	EXPECT_OFF(test, shca_create_cq_req, comp_mask, 0);
	EXPECT_OFF(test, shca_create_cq_req, reserved_32, 4);
}

static void shca_abi_create_cq_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_cq_resp, 48);
	EXPECT_OFF(test, shca_create_cq_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_create_cq_resp, cqn, 4);
	EXPECT_OFF(test, shca_create_cq_resp, ring, 8);
}

static void shca_abi_resize_cq_req_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_resize_cq_req, 8);
	EXPECT_OFF(test, shca_resize_cq_req, comp_mask, 0);
	EXPECT_OFF(test, shca_resize_cq_req, reserved_32, 4);
}

static void shca_abi_resize_cq_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_resize_cq_resp, 48);
	EXPECT_OFF(test, shca_resize_cq_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_resize_cq_resp, reserved_32, 4);
	EXPECT_OFF(test, shca_resize_cq_resp, ring, 8);
}

static void shca_abi_create_qp_req_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_qp_req, 64);
	EXPECT_OFF(test, shca_create_qp_req, comp_mask, 0);
	EXPECT_OFF(test, shca_create_qp_req, reserved_32, 4);
	EXPECT_OFF(test, shca_create_qp_req, rx_hash_fields_mask, 8);
	EXPECT_OFF(test, shca_create_qp_req, rx_hash_function, 16);
	EXPECT_OFF(test, shca_create_qp_req, rx_hash_key_len, 17);
	EXPECT_OFF(test, shca_create_qp_req, reserved_144, 18);
	EXPECT_OFF(test, shca_create_qp_req, rx_hash_key, 24);
}

static void shca_abi_wq_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_wq_req, 8);
	EXPECT_OFF(test, shca_create_wq_req, comp_mask, 0);
	EXPECT_OFF(test, shca_create_wq_req, reserved_32, 4);
	EXPECT_SIZE(test, shca_create_wq_resp, 48);
	EXPECT_OFF(test, shca_create_wq_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_create_wq_resp, wqn, 4);
	EXPECT_OFF(test, shca_create_wq_resp, ring, 8);
}

static void shca_abi_create_qp_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_qp_resp, 96);
	EXPECT_OFF(test, shca_create_qp_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_create_qp_resp, qpn, 4);
	EXPECT_OFF(test, shca_create_qp_resp, max_inline_data, 8);
	EXPECT_OFF(test, shca_create_qp_resp, reserved_96, 12);
	EXPECT_OFF(test, shca_create_qp_resp, sq, 16);
	EXPECT_OFF(test, shca_create_qp_resp, rq, 56);
}

static void shca_abi_srq_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_srq_req, 8);
	EXPECT_OFF(test, shca_create_srq_req, comp_mask, 0);
	EXPECT_OFF(test, shca_create_srq_req, tm_max_ops, 4);
	EXPECT_SIZE(test, shca_create_srq_resp, 104);
	EXPECT_OFF(test, shca_create_srq_resp, ring, 8);
	EXPECT_OFF(test, shca_create_srq_resp, tm_max_tags, 48);
	EXPECT_OFF(test, shca_create_srq_resp, tm_max_ops, 52);
	EXPECT_OFF(test, shca_create_srq_resp, tm_max_sge, 56);
	EXPECT_OFF(test, shca_create_srq_resp, reserved_416, 60);
	EXPECT_OFF(test, shca_create_srq_resp, tm_ops, 64);
	EXPECT_SIZE(test, shca_modify_srq_req, 16);
	EXPECT_OFF(test, shca_modify_srq_req, ring_info_va, 8);
}

static void shca_abi_tm_op_wqe_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_tm_op_wqe, 48);
	EXPECT_OFF(test, shca_tm_op_wqe, wr_id, 0);
	EXPECT_OFF(test, shca_tm_op_wqe, opcode, 8);
	EXPECT_OFF(test, shca_tm_op_wqe, num_sge, 9);
	EXPECT_OFF(test, shca_tm_op_wqe, flags, 10);
	EXPECT_OFF(test, shca_tm_op_wqe, result, 11);
	EXPECT_OFF(test, shca_tm_op_wqe, handle, 12);
	EXPECT_OFF(test, shca_tm_op_wqe, unexpected_cnt, 16);
	EXPECT_OFF(test, shca_tm_op_wqe, reserved_160, 20);
	EXPECT_OFF(test, shca_tm_op_wqe, recv_wr_id, 24);
	EXPECT_OFF(test, shca_tm_op_wqe, tag, 32);
	EXPECT_OFF(test, shca_tm_op_wqe, mask, 40);
	KUNIT_EXPECT_EQ(test, SHCA_WC_TM_ADD, 0x82);
	KUNIT_EXPECT_EQ(test, SHCA_WC_TM_NO_TAG, 0x86);
	KUNIT_EXPECT_EQ(test, SHCA_WC_TM_ERR, 22);
	KUNIT_EXPECT_EQ(test, SHCA_WC_TM_RNDV_INCOMPLETE, 23);
}

static void shca_abi_create_ah_resp_test(struct kunit *test)
{
	EXPECT_SIZE(test, shca_create_ah_resp, 8);
	EXPECT_OFF(test, shca_create_ah_resp, comp_mask, 0);
	EXPECT_OFF(test, shca_create_ah_resp, ah_handle, 4);
}

static void shca_abi_consts_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SHCA_UVERBS_ABI_VERSION, 1);
	KUNIT_EXPECT_STREQ(test, SHCA_SYSFS_ABI_ATTR, "shca_abi_version");
	KUNIT_EXPECT_EQ(test, sizeof(struct shca_ring_ctl) % 64, (size_t)0);
}

static struct kunit_case shca_abi_cases[] = {
	KUNIT_CASE(shca_abi_ring_ctl_test),
	KUNIT_CASE(shca_abi_sge_test),
	KUNIT_CASE(shca_abi_wqe_rdma_test),
	KUNIT_CASE(shca_abi_wqe_atomic_test),
	KUNIT_CASE(shca_abi_wqe_ud_test),
	KUNIT_CASE(shca_abi_wqe_mem_test),
	KUNIT_CASE(shca_abi_send_wqe_test),
	KUNIT_CASE(shca_abi_recv_wqe_test),
	KUNIT_CASE(shca_abi_cqe_test),
	KUNIT_CASE(shca_abi_alloc_ucontext_req_test),
	KUNIT_CASE(shca_abi_alloc_ucontext_resp_test),
	KUNIT_CASE(shca_abi_alloc_pd_resp_test),
	KUNIT_CASE(shca_abi_ring_info_test),
	KUNIT_CASE(shca_abi_create_cq_req_test),
	KUNIT_CASE(shca_abi_create_cq_resp_test),
	KUNIT_CASE(shca_abi_resize_cq_req_test),
	KUNIT_CASE(shca_abi_resize_cq_resp_test),
	KUNIT_CASE(shca_abi_srq_test),
	KUNIT_CASE(shca_abi_tm_op_wqe_test),
	KUNIT_CASE(shca_abi_create_qp_req_test),
	KUNIT_CASE(shca_abi_wq_test),
	KUNIT_CASE(shca_abi_create_qp_resp_test),
	KUNIT_CASE(shca_abi_create_ah_resp_test),
	KUNIT_CASE(shca_abi_consts_test),
	{}
};

static struct kunit_suite shca_abi_suite = {
	.name = "shca_abi",
	.test_cases = shca_abi_cases,
};

kunit_test_suites(&shca_abi_suite);
