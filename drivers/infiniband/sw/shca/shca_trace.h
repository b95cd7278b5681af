/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the tracepoints (events/shca/ in tracefs; trace-cmd record -e shca,
 * perf trace -e 'shca:*').  Each costs a static branch when disabled.
 *
 *   shca_qp_state   a QP's state changes (modify_qp, or an error)
 *   shca_pkt        a packet leaves or arrives: QPN, opcode, PSN, length
 *                   and path (wire; direct: the same-host path; inline:
 *                   arrived to be run in the sending thread)
 *   shca_drop       a received packet dropped, with its counter's name
 *   shca_retransmit the requester goes back to a PSN (a loss)
 *   shca_timeout    the local ACK timer fired without progress
 *   shca_hold       a packet that came early is held back for reordering
 *   shca_cqe        a completion is written to a CQ
 *   shca_async      an affiliated asynchronous event is raised (CQ, QP,
 *                   SRQ or WQ number)
 *
 * shca_trace.c instantiates them (CREATE_TRACE_POINTS).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM shca

#if !defined(SHCA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SHCA_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "wire.h"

/* Values of the path field of shca_pkt. */
#define SHCA_TRACE_WIRE		0
#define SHCA_TRACE_DIRECT	1
#define SHCA_TRACE_INLINE	2

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define shca_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

TRACE_EVENT(shca_qp_state,
	    TP_PROTO(const struct shca_qp *qp, u32 from, u32 to),
	    TP_ARGS(qp, from, to),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, from)
			     __field(u32, to)),
	    TP_fast_assign(strscpy(__entry->dev,
				   dev_name(&qp->ibqp.device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("%s qpn=%u %s -> %s", __entry->dev, __entry->qpn,
		      shca_show_qp_state(__entry->from),
		      shca_show_qp_state(__entry->to))
);

/* len: the bytes after the UDP header (BTH to ICRC) */
TRACE_EVENT(shca_pkt,
	    TP_PROTO(const struct shca_dev *sdev, const struct shca_bth *bth,
		     u32 len, bool tx, u8 path),
	    TP_ARGS(sdev, bth, len, tx, path),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, len)
			     __field(u8, opcode)
			     __field(u8, tx)
			     __field(u8, path)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&sdev->ibdev.dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->qpn = be32_to_cpu(bth->qpn) &
					  SHCA_WIRE_24BIT;
			   __entry->psn = be32_to_cpu(bth->apsn) &
					  SHCA_WIRE_24BIT;
			   __entry->len = len;
			   __entry->opcode = bth->opcode;
			   __entry->tx = tx;
			   __entry->path = path;),
	    TP_printk("%s %s qpn=%u opcode=0x%02x psn=%u len=%u path=%s",
		      __entry->dev, __entry->tx ? "tx" : "rx", __entry->qpn,
		      __entry->opcode, __entry->psn, __entry->len,
		      __print_symbolic(__entry->path,
				       { SHCA_TRACE_WIRE, "wire" },
				       { SHCA_TRACE_DIRECT, "direct" },
				       { SHCA_TRACE_INLINE, "inline" }))
);

TRACE_EVENT(shca_drop,
	    TP_PROTO(const struct shca_dev *sdev, int stat),
	    TP_ARGS(sdev, stat),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __array(char, reason, 32)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&sdev->ibdev.dev),
				   IB_DEVICE_NAME_MAX);
			   strscpy(__entry->reason, shca_stat_name(stat),
				   sizeof(__entry->reason));),
	    TP_printk("%s reason=%s", __entry->dev, __entry->reason)
);

DECLARE_EVENT_CLASS(shca_qp_psn,
		    TP_PROTO(const struct shca_qp *qp, u32 psn, u32 arg),
		    TP_ARGS(qp, psn, arg),
		    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, arg)),
		    TP_fast_assign(strscpy(__entry->dev,
					   dev_name(&qp->ibqp.device->dev),
					   IB_DEVICE_NAME_MAX);
				   __entry->qpn = qp->ibqp.qp_num;
				   __entry->psn = psn;
				   __entry->arg = arg;),
		    TP_printk("%s qpn=%u psn=%u arg=%u", __entry->dev,
			      __entry->qpn, __entry->psn, __entry->arg)
);

/* arg: the PSNs sent and not yet acknowledged before going back */
DEFINE_EVENT(shca_qp_psn, shca_retransmit,
	     TP_PROTO(const struct shca_qp *qp, u32 psn, u32 arg),
	     TP_ARGS(qp, psn, arg));

/* psn: the oldest unacknowledged; arg: transport retries left */
DEFINE_EVENT(shca_qp_psn, shca_timeout,
	     TP_PROTO(const struct shca_qp *qp, u32 psn, u32 arg),
	     TP_ARGS(qp, psn, arg));

/* arg: 0 for a request held by the responder, 1 for a response */
DEFINE_EVENT(shca_qp_psn, shca_hold,
	     TP_PROTO(const struct shca_qp *qp, u32 psn, u32 arg),
	     TP_ARGS(qp, psn, arg));

TRACE_EVENT(shca_cqe,
	    TP_PROTO(const struct shca_cq *cq, const struct shca_cqe *cqe),
	    TP_ARGS(cq, cqe),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u64, wr_id)
			     __field(u32, qpn)
			     __field(u32, byte_len)
			     __field(u8, opcode)
			     __field(u8, status)),
	    TP_fast_assign(strscpy(__entry->dev,
				   dev_name(&cq->ibcq.device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->wr_id = cqe->wr_id;
			   __entry->qpn = cqe->qp_num;
			   __entry->byte_len = cqe->byte_len;
			   __entry->opcode = cqe->opcode;
			   __entry->status = cqe->status;),
	    TP_printk("%s qpn=%u wr_id=0x%llx opcode=%u status=%u byte_len=%u",
		      __entry->dev, __entry->qpn,
		      (unsigned long long)__entry->wr_id, __entry->opcode,
		      __entry->status, __entry->byte_len)
);

TRACE_DEFINE_ENUM(IB_EVENT_CQ_ERR);
TRACE_DEFINE_ENUM(IB_EVENT_QP_FATAL);
TRACE_DEFINE_ENUM(IB_EVENT_SRQ_ERR);
TRACE_DEFINE_ENUM(IB_EVENT_SRQ_LIMIT_REACHED);
TRACE_DEFINE_ENUM(IB_EVENT_QP_LAST_WQE_REACHED);
TRACE_DEFINE_ENUM(IB_EVENT_WQ_FATAL);

#define shca_show_event(e)						\
	__print_symbolic(e, { IB_EVENT_CQ_ERR, "CQ_ERR" },\
			 { IB_EVENT_QP_FATAL, "QP_FATAL" },\
			 { IB_EVENT_SRQ_ERR, "SRQ_ERR" },\
			 { IB_EVENT_SRQ_LIMIT_REACHED, "SRQ_LIMIT_REACHED" },\
			 { IB_EVENT_QP_LAST_WQE_REACHED, "QP_LAST_WQE_REACHED" },\
			 { IB_EVENT_WQ_FATAL, "WQ_FATAL" })

TRACE_EVENT(shca_async,
	    TP_PROTO(const struct ib_event *ev, u32 num),
	    TP_ARGS(ev, num),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, event)
			     __field(u32, num)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ev->device->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->event = ev->event;
			   __entry->num = num;),
	    TP_printk("%s %s num=%u", __entry->dev,
		      shca_show_event(__entry->event), __entry->num)
);

#endif /* SHCA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE shca_trace
#include <trace/define_trace.h>
