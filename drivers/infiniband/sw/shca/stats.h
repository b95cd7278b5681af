/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the hardware counters, as an X-macro list.  Include with
 * SHCA_STAT(id, name) defined; no include guard on purpose.  Only list
 * counters that some code path really increments.
 */
SHCA_STAT(ALLOC_UCONTEXT_ERR, "alloc_ucontext_err")
SHCA_STAT(ALLOC_PD_ERR, "alloc_pd_err")
SHCA_STAT(CREATE_AH_ERR, "create_ah_err")
SHCA_STAT(REG_MR_ERR, "reg_mr_err")
SHCA_STAT(CREATE_CQ_ERR, "create_cq_err")
SHCA_STAT(CREATE_QP_ERR, "create_qp_err")
SHCA_STAT(MODIFY_QP_ERR, "modify_qp_err")
SHCA_STAT(MMAP_ERR, "mmap_err")
SHCA_STAT(POST_RECV_ERR, "post_recv_err")
SHCA_STAT(TX_PACKETS, "tx_packets")
SHCA_STAT(TX_ERR, "tx_err")
SHCA_STAT(RX_PACKETS, "rx_packets")
SHCA_STAT(RX_BAD_ICRC, "rx_bad_icrc")
SHCA_STAT(RX_MALFORMED, "rx_malformed")
SHCA_STAT(RX_NO_QP, "rx_no_qp")
SHCA_STAT(RX_BAD_QKEY, "rx_bad_qkey")
SHCA_STAT(RX_NO_RECV_WQE, "rx_no_recv_wqe")
SHCA_STAT(RX_DROPPED, "rx_dropped")
SHCA_STAT(CQ_OVERFLOW, "cq_overflow")
SHCA_STAT(QP_FATAL, "qp_fatal")
SHCA_STAT(RC_DUP_REQUESTS, "rc_dup_requests")
SHCA_STAT(RC_SEQ_NAKS_SENT, "rc_seq_naks_sent")
SHCA_STAT(RC_RNR_NAKS_SENT, "rc_rnr_naks_sent")
SHCA_STAT(RC_REM_ACCESS_ERRS, "rc_rem_access_errs")
SHCA_STAT(RC_REM_OP_ERRS, "rc_rem_op_errs")
SHCA_STAT(RC_INV_REQS, "rc_inv_reqs")
SHCA_STAT(UC_MSGS_DROPPED, "uc_msgs_dropped")
