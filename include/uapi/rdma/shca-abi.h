/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * shca: software RoCE v2 HCA - user/kernel ABI.
 *
 * Shared by the kernel driver (drivers/infiniband/sw/shca) and the
 * rdma-core provider (providers/shca).
 *
 * Rules for every structure in this file:
 *  - All structures are 8-byte aligned and have no implicit padding;
 *    64-bit fields are __aligned_u64.
 *  - Command structures start with comp_mask.  The kernel rejects a
 *    non-zero comp_mask bit it does not know, and any non-zero byte past
 *    the end of the structure it knows (ib_is_udata_cleared).
 *  - Reserved fields are named reserved_<bit offset> and must be zero.
 *  - Responses are truncated to the length userspace offered, so an old
 *    provider keeps working with a newer kernel.
 *  - Nothing in here is a kernel pointer or kernel-private state.  Queue
 *    memory is named by an opaque mmap key handed out by the kernel.
 *
 * Queue memory model
 * ------------------
 * Every SQ, RQ and CQ is a ring of fixed-size entries in DMA-coherent
 * memory, mapped into the process with mmap(2) on the uverbs fd at
 * offset mmap_key.  The mapping is mmap_len bytes long.  A struct
 * shca_ring_ctl sits at ctl_offset inside the mapping and the entries
 * start at entries_offset; entry i is at entries_offset + (i << entry_shift).
 * The entry count is a power of two.
 *
 * Indices are free-running 32-bit counters; the slot of index n is
 * n & (entries - 1).  A ring is empty when prod == cons and full when
 * prod - cons == entries.
 *
 * Ownership:
 *   SQ/RQ/SRQ: userspace produces (writes prod), the kernel consumes
 *          (writes cons).  The receive engines of every QP attached to an
 *          SRQ consume from it, serialised by the kernel.  The kernel
 *          never trusts prod: it masks every index it reads and treats
 *          prod - cons > entries as a broken ring.
 *   CQ:    the kernel produces (writes prod), userspace consumes (writes
 *          cons).  The kernel keeps its own private copy of its producer
 *          index and only publishes it here.
 *
 * Barriers:
 *   A producer fills an entry, then publishes prod with a release store
 *   (smp_store_release / __atomic_store_n(..., __ATOMIC_RELEASE)).  A
 *   consumer reads prod with an acquire load before it reads the entry,
 *   and publishes cons with a release store after it is done with the
 *   entry.
 *
 * Doorbell suppression (SQ/RQ):
 *   After publishing prod the provider issues a full barrier and reads
 *   ctl->flags.  If SHCA_RING_F_ENGINE_ACTIVE is set the engine is
 *   already working on this queue and will see the new prod, so no
 *   doorbell (system call) is needed.  The engine clears the flag, issues
 *   a full barrier and re-reads prod before it goes idle, so a post that
 *   races with the engine going idle is never lost.
 */
#ifndef SHCA_ABI_USER_H
#define SHCA_ABI_USER_H

#include <linux/types.h>

/* uverbs ABI version reported in /sys/class/infiniband_verbs/.../abi_version */
#define SHCA_UVERBS_ABI_VERSION 1

/* Name of the driver-owned sysfs attribute of the ib_device that the
 * provider matches on.  It reads as the decimal ABI version.
 */
#define SHCA_SYSFS_ABI_ATTR "shca_abi_version"

/*
 * ibv_query_device()'s raw fw_ver (struct ib_uverbs_query_device_resp) is
 * major << 32 | minor << 16 | subminor; the provider prints it as
 * "major.minor.subminor".
 */
#define SHCA_FW_VER_ENCODE(major, minor, sub) \
	(((__u64)(major) << 32) | ((__u64)(minor) << 16) | (__u64)(sub))

/* ------------------------------------------------------------------ */
/* Shared ring control block                                          */
/* ------------------------------------------------------------------ */

enum shca_ring_flags {
	/* SQ/RQ: the engine is processing this queue; no doorbell needed. */
	SHCA_RING_F_ENGINE_ACTIVE = 1 << 0,
	/* CQ: the queue overflowed and is in error; set by the kernel. */
	SHCA_RING_F_ERROR = 1 << 1,
};

/*
 * Producer and consumer indices live in separate cache lines so the two
 * sides do not bounce one line between them.
 */
struct shca_ring_ctl {
	__u32 prod;
	__u32 reserved_32[15];
	__u32 cons;
	__u32 flags;		/* enum shca_ring_flags, written by the kernel */
	__u32 arm;		/* CQ: enum shca_cq_arm, see below */
	__u32 reserved_608[13];
};

/*
 * Arming a CQ without a system call (a CQ whose create_cq response has
 * SHCA_CREATE_CQ_RESP_CMASK_ARM): ibv_req_notify_cq() ORs SHCA_CQ_ARM_NEXT,
 * or SHCA_CQ_ARM_SOLICITED for solicited_only, into ctl->arm with an
 * atomic read-modify-write, then issues a full barrier before it polls
 * again.  Each time the kernel writes a CQE it publishes prod, issues a
 * full barrier and, if the word is non-zero, swaps it with zero; what it
 * took counts as an ib_req_notify_cq() of that kind (NEXT wins over
 * SOLICITED; one event per arm, moderation applies).  So either the
 * kernel sees the arm when it writes a CQE, or the consumer's next poll
 * sees that CQE: a CQE written between a poll and the arm is reported by
 * the next poll, not by an event (ibv_req_notify_cq(3)).  Other bits are
 * ignored.  Resizing the CQ carries an arm over; the new ring's word
 * starts at zero.
 */
enum shca_cq_arm {
	SHCA_CQ_ARM_NEXT = 1 << 0,
	SHCA_CQ_ARM_SOLICITED = 1 << 1,
};

/* ------------------------------------------------------------------ */
/* Work queue entries                                                 */
/* ------------------------------------------------------------------ */

struct shca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * Send opcodes: the values of enum ib_uverbs_wr_opcode (and so IBV_WR_*)
 * where one exists; kernel-only and driver-private operations above 0x1f.
 */
enum shca_wqe_opcode {
	SHCA_OP_RDMA_WRITE = 0,
	SHCA_OP_RDMA_WRITE_WITH_IMM = 1,
	SHCA_OP_SEND = 2,
	SHCA_OP_SEND_WITH_IMM = 3,
	SHCA_OP_RDMA_READ = 4,
	SHCA_OP_ATOMIC_CMP_AND_SWP = 5,
	SHCA_OP_ATOMIC_FETCH_AND_ADD = 6,
	SHCA_OP_LOCAL_INV = 7,
	SHCA_OP_BIND_MW = 8,
	SHCA_OP_SEND_WITH_INV = 9,
	SHCA_OP_TSO = 10,
	SHCA_OP_DRIVER1 = 11,
	SHCA_OP_MASKED_ATOMIC_CMP_AND_SWP = 12,
	SHCA_OP_MASKED_ATOMIC_FETCH_AND_ADD = 13,
	SHCA_OP_FLUSH = 14,
	SHCA_OP_ATOMIC_WRITE = 15,
	SHCA_OP_REG_MR = 0x20,		/* kernel consumers only (IB_WR_REG_MR) */
	SHCA_OP_TM_ADD = 0x30,		/* tag matching list operations */
	SHCA_OP_TM_DEL = 0x31,
	SHCA_OP_TM_SYNC = 0x32,
	SHCA_OP_MAX = 0x80,
};

/*
 * SHCA_OP_ATOMIC_WRITE (RC): the 8 bytes to write travel inline
 * (SHCA_WQE_F_INLINE, inline_len 8) and rdma.remote_addr, 8-byte aligned,
 * and rdma.rkey say where.
 */
#define SHCA_ATOMIC_WRITE_LEN 8

enum shca_wqe_flags {
	SHCA_WQE_F_SIGNALED = 1 << 0,
	SHCA_WQE_F_SOLICITED = 1 << 1,
	SHCA_WQE_F_FENCE = 1 << 2,
	SHCA_WQE_F_INLINE = 1 << 3,
	/*
	 * RAW_PACKET QPs (IBV_SEND_IP_CSUM): fill in the IPv4 header
	 * checksum and the TCP/UDP checksum of the frame before it leaves.
	 */
	SHCA_WQE_F_IP_CSUM = 1 << 4,
};

/*
 * RAW_PACKET QPs send with SHCA_OP_SEND only: the SGEs or inline bytes
 * hold one whole Ethernet frame (Ethernet header first, at most the
 * netdev's MTU plus the Ethernet header, plus 4 bytes if it is tagged);
 * flags SIGNALED, INLINE and IP_CSUM.  Other opcodes complete with
 * IBV_WC_LOC_QP_OP_ERR, bad lengths with IBV_WC_LOC_LEN_ERR.
 */

struct shca_wqe_rdma {
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 reserved_96;
	__aligned_u64 reserved_128[2];
};

/*
 * SHCA_OP_FLUSH (RC): IBTA 1.5 FLUSH of [remote_addr, remote_addr +
 * length) under @rkey (level SHCA_FLUSH_RANGE; length below 2^31 + 1), or
 * of the whole region @rkey names (SHCA_FLUSH_MR; remote_addr and length
 * travel but are not used).  @type: SHCA_FLUSH_GLOBAL and/or
 * SHCA_FLUSH_PERSISTENT (the IBV_FLUSH_* values); no SGEs, no inline
 * data.  The completion opcode is IBV_WC_FLUSH (8).
 */
struct shca_wqe_flush {
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u8 type;
	__u8 level;
	__u16 reserved_112;
	__aligned_u64 length;
	__aligned_u64 reserved_192;
};

enum shca_flush_type {
	SHCA_FLUSH_GLOBAL = 1 << 0,
	SHCA_FLUSH_PERSISTENT = 1 << 1,
};

enum shca_flush_level {
	SHCA_FLUSH_RANGE = 0,
	SHCA_FLUSH_MR = 1,
};

struct shca_wqe_atomic {
	__aligned_u64 remote_addr;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__u32 rkey;
	__u32 reserved_224;
};

struct shca_wqe_ud {
	__u32 ah_handle;	/* from struct shca_create_ah_resp */
	__u32 remote_qpn;
	__u32 remote_qkey;
	__u32 reserved_96;
	__aligned_u64 reserved_128[2];
};

/*
 * SHCA_OP_BIND_MW: bind the memory window named by the index of @rkey
 * (the new R_Key: same index, new key byte) to [addr, addr + length) of
 * the MR named by mr_lkey.  Type 1 windows must also carry their current
 * R_Key in mw_rkey; length 0 unbinds a type 1 window.  access holds
 * IB_ACCESS_REMOTE_* (IBV_ACCESS_*) bits.
 */
struct shca_wqe_bind_mw {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_lkey;
	__u32 mw_rkey;
	__u32 rkey;
	__u32 access;
};

/*
 * SHCA_OP_REG_MR (kernel QPs only, never in a user ring): give the fast
 * registration MR whose index is in mr_key the key @key, the access
 * flags @access and the page list last built by ib_map_mr_sg(), mapping
 * [iova, iova + length) with pages of 1 << page_shift bytes.
 */
struct shca_wqe_reg_mr {
	__aligned_u64 iova;
	__aligned_u64 length;
	__u32 mr_key;
	__u32 key;
	__u32 access;
	__u32 page_shift;
};

/* Send queue entry.  The stride is 1 << the SQ ring's entry_shift (at
 * most sq_entry_shift); SGEs or inline data follow the header up to the
 * end of the entry, as many as the QP's granted caps say.
 */
struct shca_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;		/* enum shca_wqe_opcode */
	__u8 num_sge;
	__u8 flags;		/* enum shca_wqe_flags */
	__u8 reserved_88;
	__u32 ex;		/* immediate data (big endian), or the rkey to
				 * invalidate (SEND_WITH_INV, LOCAL_INV)
				 */
	__u32 inline_len;
	__u32 xrc_remote_srqn;	/* XRC_SEND QPs: the target XRC SRQ number
				 * (24 bits); zero on every other QP type
				 */
	union {
		struct shca_wqe_rdma rdma;
		struct shca_wqe_flush flush;	/* SHCA_OP_FLUSH */
		struct shca_wqe_atomic atomic;
		struct shca_wqe_ud ud;
		struct shca_wqe_bind_mw bind;	/* SHCA_OP_BIND_MW */
		struct shca_wqe_reg_mr reg;	/* SHCA_OP_REG_MR */
	};
	__aligned_u64 reserved_448;
	/* struct shca_sge sge[] or inline bytes follow */
};

/* Receive queue entry.  The stride is 1 << its ring's entry_shift (at
 * most rq_entry_shift), as the queue's granted max_sge fits.
 */
struct shca_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved_96;
	/* struct shca_sge sge[] follows */
};

/* ------------------------------------------------------------------ */
/* Completion queue entries                                           */
/* ------------------------------------------------------------------ */

/* Completion opcodes: values of enum ib_wc_opcode. */
enum shca_cqe_flags {
	SHCA_CQE_F_IMM = 1 << 0,	/* imm_data valid */
	SHCA_CQE_F_INV = 1 << 1,	/* invalidated rkey in imm_data */
	SHCA_CQE_F_GRH = 1 << 2,	/* UD: a GRH was present */
	SHCA_CQE_F_TM = 1 << 3,		/* tag matching fields valid */
	/*
	 * RAW_PACKET receive (IBV_WC_IP_CSUM_OK): an IPv4 frame whose
	 * header checksum and TCP/UDP checksum are right.  A raw receive
	 * completion is IB_WC_RECV with byte_len the frame length and qp_num
	 * the QP's (an RSS QP's: the WQ's number); it carries no GRH.
	 */
	SHCA_CQE_F_IP_CSUM_OK = 1 << 4,
	/*
	 * Receive on a WQ with IB_WQ_FLAGS_CVLAN_STRIPPING: the frame's
	 * 802.1Q tag (right after the MACs) was removed from the bytes
	 * written (byte_len is the stripped length) and vlan_id holds its
	 * TCI in host order (ibv_wc_read_cvlan()).  Such a completion has
	 * no smac.
	 */
	SHCA_CQE_F_CVLAN = 1 << 5,
};

/*
 * Tag matching completions (CQ of a TM SRQ, SHCA_CQE_F_TM set).  Their
 * opcodes and two statuses have no enum ib_wc_opcode/ib_wc_status value;
 * the numbers are libibverbs' IBV_WC_TM_* ones.
 */
enum shca_cqe_tm_opcode {
	SHCA_WC_TM_ADD = 0x82,		/* IBV_WC_TM_ADD */
	SHCA_WC_TM_DEL = 0x83,		/* IBV_WC_TM_DEL */
	SHCA_WC_TM_SYNC = 0x84,		/* IBV_WC_TM_SYNC */
	SHCA_WC_TM_RECV = 0x85,		/* IBV_WC_TM_RECV */
	SHCA_WC_TM_NO_TAG = 0x86,	/* IBV_WC_TM_NO_TAG */
};

enum shca_cqe_tm_status {
	SHCA_WC_TM_ERR = 22,		/* IBV_WC_TM_ERR */
	SHCA_WC_TM_RNDV_INCOMPLETE = 23,	/* IBV_WC_TM_RNDV_INCOMPLETE */
};

enum shca_cqe_tm_flags {
	SHCA_CQE_TM_F_MATCH = 1 << 0,		/* IBV_WC_TM_MATCH */
	SHCA_CQE_TM_F_DATA_VALID = 1 << 1,	/* IBV_WC_TM_DATA_VALID */
	SHCA_CQE_TM_F_SYNC_REQ = 1 << 2,	/* IBV_WC_TM_SYNC_REQ */
	/*
	 * A message's tag entry tm_handle left the kernel's hands with
	 * this receive completion (its message is done with, or failed):
	 * the provider may hand the handle out again.  List operation
	 * completions never carry it (their handles come back through the
	 * op's result).
	 */
	SHCA_CQE_TM_F_RELEASE = 1 << 3,
};

struct shca_cqe {
	__aligned_u64 wr_id;
	__u8 status;		/* enum ib_wc_status */
	__u8 opcode;		/* enum ib_wc_opcode */
	__u8 flags;		/* enum shca_cqe_flags */
	__u8 sl;
	__u32 byte_len;
	__u32 qp_num;
	__u32 src_qp;
	/* big endian immediate data, or the invalidated rkey in host order */
	__u32 imm_data;
	__u16 pkey_index;
	__u8 network_hdr_type;	/* enum rdma_network_type */
	__u8 reserved_248;
	__u32 vendor_err;
	__u16 slid;
	__u8 dlid_path_bits;
	__u8 port_num;
	__aligned_u64 tm_tag;	/* SHCA_CQE_F_TM: the TMH tag (0 if none) */
	__u16 tm_flags;		/* SHCA_CQE_F_TM: enum shca_cqe_tm_flags */
	__u16 tm_handle;	/* SHCA_CQE_TM_F_RELEASE: the tag entry */
	__u32 tm_app_ctx;	/* SHCA_CQE_F_TM: the TMH app_ctx */
	union {
		struct {		/* UD; vlan_id also SHCA_CQE_F_CVLAN */
			__u8 smac[6];
			__u16 vlan_id;
		};
		struct {		/* SHCA_CQE_F_TM */
			__u32 tm_srqn;	/* the TM SRQ it belongs to */
			__u32 reserved_480;
		};
	};
};

/* ------------------------------------------------------------------ */
/* Commands                                                           */
/* ------------------------------------------------------------------ */

struct shca_alloc_ucontext_req {
	__u32 comp_mask;
	__u32 reserved_32;
};

/*
 * SHCA_UCONTEXT_RESP_CMASK_FLUSH: the kernel executes SHCA_OP_FLUSH (it
 * is 6.2 or later); without it a FLUSH WQE completes with
 * IBV_WC_LOC_QP_OP_ERR and the provider does not grant
 * IBV_QP_EX_WITH_FLUSH.
 */
enum shca_ucontext_resp_cmask {
	SHCA_UCONTEXT_RESP_CMASK_RINGS = 1 << 0,
	SHCA_UCONTEXT_RESP_CMASK_FLUSH = 1 << 1,
};

struct shca_alloc_ucontext_resp {
	__u32 comp_mask;	/* enum shca_ucontext_resp_cmask */
	__u32 abi_version;	/* SHCA_UVERBS_ABI_VERSION */
	__u32 max_sq_wr;
	__u32 max_rq_wr;
	__u32 max_sge;
	__u32 max_inline_data;
	__u32 max_cqe;
	__u32 sq_entry_shift;	/* log2 of the largest send entry stride */
	__u32 rq_entry_shift;	/* log2 of the largest receive entry stride */
	__u32 cqe_shift;	/* log2 of struct shca_cqe stride */
	__u32 ctl_size;		/* sizeof(struct shca_ring_ctl) in use */
	__u32 reserved_352;
};

struct shca_alloc_pd_resp {
	__u32 comp_mask;
	__u32 pdn;
};

/*
 * One mmap-able ring, as described by the kernel.
 *
 * The ring's memory is one or more DMA-coherent chunks of 1 << chunk_shift
 * bytes each (the last one may be shorter; mmap_len is the total).  Chunk i
 * is mapped with its own mmap(2) call at file offset
 * mmap_key + (i << chunk_shift), for min(1 << chunk_shift, remaining)
 * bytes, at byte (i << chunk_shift) of one contiguous virtual range of the
 * process.  No entry straddles a chunk boundary.
 */
struct shca_ring_info {
	__aligned_u64 mmap_key;		/* offset of chunk 0 for mmap(2) */
	__aligned_u64 mmap_len;		/* total bytes of all chunks */
	__u32 ctl_offset;		/* struct shca_ring_ctl inside the range */
	__u32 entries_offset;		/* first entry inside the range */
	__u32 entries;			/* power of two */
	__u32 entry_shift;		/* log2 of the entry stride */
	__u32 chunk_shift;		/* log2 of the chunk size, >= PAGE_SHIFT */
	__u32 reserved_288;
};

struct shca_create_cq_req {
	__u32 comp_mask;
	__u32 reserved_32;
};

enum shca_create_cq_resp_cmask {
	SHCA_CREATE_CQ_RESP_CMASK_ARM = 1 << 0,	/* ctl->arm is read */
};

struct shca_create_cq_resp {
	__u32 comp_mask;	/* enum shca_create_cq_resp_cmask */
	__u32 cqn;
	struct shca_ring_info ring;
};

struct shca_resize_cq_req {
	__u32 comp_mask;
	__u32 reserved_32;
};

struct shca_resize_cq_resp {
	__u32 comp_mask;
	__u32 reserved_32;
	struct shca_ring_info ring;
};

enum shca_create_qp_req_cmask {
	SHCA_CREATE_QP_REQ_CMASK_RX_HASH = 1 << 0,	/* rx_hash_* valid */
};

/*
 * RSS hash fields (rx_hash_fields_mask): the values of IBV_RX_HASH_*.
 * SHCA_RX_HASH_FIELDS is the set the kernel implements; IPSEC_SPI and
 * INNER are refused with EOPNOTSUPP.
 */
enum shca_rx_hash_fields {
	SHCA_RX_HASH_SRC_IPV4 = 1 << 0,
	SHCA_RX_HASH_DST_IPV4 = 1 << 1,
	SHCA_RX_HASH_SRC_IPV6 = 1 << 2,
	SHCA_RX_HASH_DST_IPV6 = 1 << 3,
	SHCA_RX_HASH_SRC_PORT_TCP = 1 << 4,
	SHCA_RX_HASH_DST_PORT_TCP = 1 << 5,
	SHCA_RX_HASH_SRC_PORT_UDP = 1 << 6,
	SHCA_RX_HASH_DST_PORT_UDP = 1 << 7,
	SHCA_RX_HASH_IPSEC_SPI = 1 << 8,
	SHCA_RX_HASH_INNER = 1U << 31,
};

#define SHCA_RX_HASH_FIELDS	0xffULL

/* rx_hash_function: the value of IBV_RX_HASH_FUNC_TOEPLITZ. */
#define SHCA_RX_HASH_FUNC_TOEPLITZ	1
#define SHCA_RX_HASH_KEY_LEN		40

/*
 * An older provider sends only the first 8 bytes.  The RX hash part is
 * required (and only allowed) for an RSS QP (a RAW_PACKET QP created with
 * an indirection table): Toeplitz, a 40-byte key, fields within
 * SHCA_RX_HASH_FIELDS, at most one of IPv4/IPv6 and one of TCP/UDP.
 */
struct shca_create_qp_req {
	__u32 comp_mask;	/* enum shca_create_qp_req_cmask */
	__u32 reserved_32;
	__aligned_u64 rx_hash_fields_mask;	/* enum shca_rx_hash_fields */
	__u8 rx_hash_function;	/* SHCA_RX_HASH_FUNC_TOEPLITZ */
	__u8 rx_hash_key_len;	/* SHCA_RX_HASH_KEY_LEN */
	__u8 reserved_144[6];
	__u8 rx_hash_key[SHCA_RX_HASH_KEY_LEN];
};

enum shca_create_qp_resp_cmask {
	SHCA_CREATE_QP_RESP_CMASK_SQ = 1 << 0,	/* sq ring valid */
	SHCA_CREATE_QP_RESP_CMASK_RQ = 1 << 1,	/* rq ring valid (no SRQ) */
};

/*
 * Rings by QP type: RC, UC, UD have an SQ and, without an SRQ, an RQ.
 * XRC_SEND (XRC initiator) has an SQ only.  XRC_RECV (XRC target) has no
 * ring at all: its receives come from the XRC SRQ named by each request,
 * and it posts nothing.
 */
struct shca_create_qp_resp {
	__u32 comp_mask;	/* enum shca_create_qp_resp_cmask */
	__u32 qpn;
	__u32 max_inline_data;
	__u32 reserved_96;
	struct shca_ring_info sq;
	struct shca_ring_info rq;
};

/*
 * Shared receive queue (basic or XRC).  Its ring holds struct
 * shca_recv_wqe entries with its ring's stride (entry_shift); receives need
 * no doorbell.  srqn is the SRQ number; for an XRC SRQ it is the number
 * that initiators put in xrc_remote_srqn (ibv_get_srq_num()).
 */
enum shca_create_srq_req_cmask {
	SHCA_CREATE_SRQ_REQ_CMASK_TM = 1 << 0,	/* tm_max_ops valid */
};

struct shca_create_srq_req {
	__u32 comp_mask;	/* enum shca_create_srq_req_cmask */
	__u32 tm_max_ops;	/* TM SRQ: ibv_tm_cap.max_ops; required */
};

enum shca_create_srq_resp_cmask {
	SHCA_CREATE_SRQ_RESP_CMASK_RING = 1 << 0,	/* ring valid */
	SHCA_CREATE_SRQ_RESP_CMASK_TM = 1 << 1,		/* tm_* valid */
};

struct shca_create_srq_resp {
	__u32 comp_mask;	/* enum shca_create_srq_resp_cmask */
	__u32 srqn;
	struct shca_ring_info ring;
	/* TM SRQ (SHCA_CREATE_SRQ_RESP_CMASK_TM) */
	__u32 tm_max_tags;	/* handles are 0 .. tm_max_tags - 1, <= 65536 */
	__u32 tm_max_ops;	/* tm_ops.entries, >= the request */
	__u32 tm_max_sge;	/* SGEs of one tagged buffer */
	__u32 reserved_416;
	struct shca_ring_info tm_ops;
};

/*
 * Tag matching SRQ (IBV_SRQT_TM) list operations.
 *
 * The provider writes struct shca_tm_op_wqe entries into the tm_ops ring
 * (stride 1 << tm_ops.entry_shift), publishes prod, and rings the
 * doorbell: a post_srq_recv command with no work requests.  The kernel
 * executes every published operation, in order, before the command
 * returns, writes each one's outcome into its @result (an enum
 * ib_wc_status value, SHCA_WC_TM_ERR included) and advances cons.
 *
 * Handles name tag entries; the provider hands them out (0 ..
 * tm_max_tags - 1) and gets one back when a completion carries
 * SHCA_CQE_TM_F_RELEASE for it, or when a TAG_DEL's @result is success.
 * The kernel checks every handle: an ADD on an entry it still holds, or
 * a DEL of one it does not list, fails with SHCA_WC_TM_ERR.
 *
 * Completions go to the SRQ's CQ: for SIGNALED operations, and for every
 * failed one.  Phase counts (SYNC flag) compare modulo 2^16.
 */
enum shca_tm_op_flags {
	SHCA_TM_OP_F_SIGNALED = 1 << 0,	/* IBV_OPS_SIGNALED */
	SHCA_TM_OP_F_SYNC = 1 << 1,	/* IBV_OPS_TM_SYNC: unexpected_cnt */
};

struct shca_tm_op_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;		/* SHCA_OP_TM_ADD, _DEL or _SYNC */
	__u8 num_sge;		/* ADD: 0 .. tm_max_sge */
	__u8 flags;		/* enum shca_tm_op_flags */
	__u8 result;		/* written by the kernel */
	__u32 handle;		/* ADD, DEL */
	__u32 unexpected_cnt;	/* with SHCA_TM_OP_F_SYNC */
	__u32 reserved_160;
	__aligned_u64 recv_wr_id;	/* ADD: wr_id of the receive completions */
	__aligned_u64 tag;	/* ADD */
	__aligned_u64 mask;	/* ADD: matches if (TMH tag & mask) == tag */
	/* struct shca_sge sge[num_sge] follows (ADD) */
};

/*
 * ibv_modify_srq().  Resizing a user SRQ (IB_SRQ_MAX_WR) moves its WQEs
 * to a new ring, which the kernel describes by writing a struct
 * shca_ring_info to ring_info_va (ring_info_len bytes offered, at least
 * sizeof(struct shca_ring_info)); the legacy modify_srq command has no
 * response buffer.  The new ring keeps every index: the posted, not yet
 * consumed WQEs sit at the same free-running indices, its ctl holds the
 * same prod and cons, and the provider goes on producing from its own
 * prod.  The provider must not post to the SRQ during the call, and
 * unmaps the old ring after it.  A modify without IB_SRQ_MAX_WR needs no
 * request (comp_mask 0, or no request at all).
 */
enum shca_modify_srq_req_cmask {
	SHCA_MODIFY_SRQ_REQ_CMASK_RING_INFO = 1 << 0,	/* ring_info_* valid */
};

struct shca_modify_srq_req {
	__u32 comp_mask;	/* enum shca_modify_srq_req_cmask */
	__u32 ring_info_len;
	__aligned_u64 ring_info_va;
};

/*
 * Work queue (ibv_create_wq, IBV_WQT_RQ).  Its ring holds struct
 * shca_recv_wqe entries with its ring's stride (entry_shift); receives need
 * no doorbell while the WQ is ready.  WQEs posted while the WQ is in the
 * error state are flushed when the kernel next looks at the WQ: a frame
 * steered to it, or any ibv_modify_wq() call (the provider issues an
 * ERR -> ERR modify after such a post).  wqn is the number completions
 * carry in qp_num.
 */
struct shca_create_wq_req {
	__u32 comp_mask;
	__u32 reserved_32;
};

enum shca_create_wq_resp_cmask {
	SHCA_CREATE_WQ_RESP_CMASK_RING = 1 << 0,	/* ring valid */
};

struct shca_create_wq_resp {
	__u32 comp_mask;	/* enum shca_create_wq_resp_cmask */
	__u32 wqn;
	struct shca_ring_info ring;
};

struct shca_create_ah_resp {
	__u32 comp_mask;
	__u32 ah_handle;	/* what a UD send WQE names the AH by */
};

#endif /* SHCA_ABI_USER_H */
