// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RAW_PACKET QPs.
 *
 * A send WQE (SHCA_OP_SEND only) holds one whole Ethernet frame in its
 * SGEs or inline bytes; the SQ engine puts it on the device's netdev with
 * dev_queue_xmit() and offers a copy to the device's own flow table, as
 * a NIC's loopback would (flow.c).  Receives are the frames flow rules
 * steer to the QP: flow.c queues a private linear copy on qp->rx_queue
 * (holding a QP reference) and rq_work hands each to shca_raw_rx_one(),
 * which writes it whole into the next receive WQE.  A raw QP never
 * RNRs: without a WQE the frame is dropped and counted.
 *
 * IBV_SEND_IP_CSUM (SHCA_WQE_F_IP_CSUM) is done in software: the IPv4
 * header checksum and a TCP/UDP checksum are filled in before the frame
 * leaves.  On receive, an IPv4 frame whose header and TCP/UDP checksums
 * are right gets SHCA_CQE_F_IP_CSUM_OK.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "flow.h"
#include "flow_logic.h"
#include "raw.h"
#include "rwq.h"

/**
 * shca_net_raw_check - does the caller have CAP_NET_RAW over @net?
 * @net: a network namespace
 *
 * The capability counts in the user namespace that owns @net: root of a
 * user namespace made with `unshare -Urn` has it over its own new netns,
 * not over the one the device's netdev lives in.
 * Context: process.
 * Return: 0 or -EPERM.
 */
int shca_net_raw_check(const struct net *net)
{
	return ns_capable(net->user_ns, CAP_NET_RAW) ? 0 : -EPERM;
}

/**
 * shca_raw_may_create - may the caller send or steer raw frames here?
 * @sdev: the device
 * @udata: the user's command, NULL for a kernel consumer (trusted)
 * @what: the object asked for, for the debug line
 *
 * Raw packet QPs, RSS QPs and flow rules put frames on, and take them
 * from, the netdev the port is bound to; a user needs CAP_NET_RAW over
 * that netdev's network namespace.  ib_core's own check (capable() up to
 * 6.15, in the caller's own user namespace from 6.16) is not relied on.
 * Context: process (the create verb).
 * Return: 0 or -EPERM.
 */
int shca_raw_may_create(struct shca_dev *sdev, struct ib_udata *udata,
			const char *what)
{
	struct net_device *ndev = sdev->ndev;

	if (!udata || !shca_net_raw_check(dev_net(ndev)))
		return 0;
	ibdev_dbg(&sdev->ibdev, "%s: needs CAP_NET_RAW over %s's network namespace\n",
		  what, netdev_name(ndev));
	return -EPERM;
}

/* Context: process (create_qp). */
int shca_raw_check_create(struct ib_device *ibdev,
			  const struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	return shca_raw_may_create(to_sdev(ibdev), udata, "qp: RAW_PACKET");
}

/*
 * Frames are delivered in RTR and RTS; an RSS QP is never modified and
 * receives from creation on (as on mlx5).
 * Context: any.
 */
bool shca_raw_qp_ready(struct shca_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (READ_ONCE(qp->dying))
		return false;
	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       shca_qp_is_rss(qp);
}

/* The checksum field of a TCP or UDP header. */
static __sum16 *shca_l4_csum_field(u8 *l4, u8 proto)
{
	if (proto == IPPROTO_TCP)
		return &((struct tcphdr *)l4)->check;
	return &((struct udphdr *)l4)->check;
}

/*
 * How many bytes of the frame the L4 segment of @p spans, per its IP
 * header; 0 if that is more than the frame holds or too short for its
 * header.
 */
static u32 shca_l4_len(const u8 *d, u32 len, const struct shca_flow_pkt *p)
{
	u32 l4len;

	if (p->l3 == 4) {
		const struct iphdr *ip = (const void *)(d + p->l3_off);

		l4len = ntohs(ip->tot_len);
		if (l4len < ip->ihl * 4)
			return 0;
		l4len -= ip->ihl * 4;
	} else {
		l4len = ntohs(((const struct ipv6hdr *)(d + p->l3_off))->payload_len);
	}
	if (l4len > len - p->l4_off)
		return 0;
	if (l4len < (p->l4 == IPPROTO_TCP ? sizeof(struct tcphdr) :
					     sizeof(struct udphdr)))
		return 0;
	return l4len;
}

/* The TCP/UDP checksum of the segment as it is now (0 when right). */
static __sum16 shca_l4_sum(const u8 *d, const struct shca_flow_pkt *p,
			   u32 l4len)
{
	__wsum sum = csum_partial(d + p->l4_off, l4len, 0);

	if (p->l3 == 4) {
		const struct iphdr *ip = (const void *)(d + p->l3_off);

		return csum_tcpudp_magic(ip->saddr, ip->daddr, l4len, p->l4,
					 sum);
	}
	return csum_ipv6_magic(&((const struct ipv6hdr *)(d + p->l3_off))->saddr,
			       &((const struct ipv6hdr *)(d + p->l3_off))->daddr,
			       l4len, p->l4, sum);
}

/*
 * IBV_SEND_IP_CSUM: fill in the IPv4 header checksum and the TCP/UDP
 * checksum of a frame about to be sent.  A frame without such headers,
 * or with lengths that do not fit the frame, is sent as it is.
 * Context: SQ engine.
 */
static void shca_raw_fill_csum(u8 *d, u32 len)
{
	struct shca_flow_pkt p;
	__sum16 *field;
	u32 l4len;

	if (shca_flow_parse(d, len, &p) || !p.l3)
		return;
	if (p.l3 == 4) {
		struct iphdr *ip = (void *)(d + p.l3_off);

		ip->check = 0;
		ip->check = ip_fast_csum(ip, ip->ihl);
	}
	if (!p.l4)
		return;
	l4len = shca_l4_len(d, len, &p);
	if (!l4len)
		return;
	field = shca_l4_csum_field(d + p.l4_off, p.l4);
	*field = 0;
	*field = shca_l4_sum(d, &p, l4len);
	if (p.l4 == IPPROTO_UDP && !*field)
		*field = CSUM_MANGLED_0;
}

/*
 * Receive: are the IPv4 header and TCP/UDP checksums of the frame right?
 * (IBV_WC_IP_CSUM_OK; IPv4 only, as libibverbs defines it.)
 * Context: RQ engine.
 */
static bool shca_raw_csum_ok(const u8 *d, u32 len)
{
	const struct iphdr *ip;
	struct shca_flow_pkt p;
	u32 l4len;

	if (shca_flow_parse(d, len, &p) || p.l3 != 4 || !p.l4)
		return false;
	ip = (const void *)(d + p.l3_off);
	if (ip_fast_csum(ip, ip->ihl))
		return false;
	l4len = shca_l4_len(d, len, &p);
	if (!l4len)
		return false;
	if (p.l4 == IPPROTO_UDP &&
	    !((const struct udphdr *)(d + p.l4_off))->check)
		return true;	/* IPv4 UDP without a checksum */
	return !shca_l4_sum(d, &p, l4len);
}

/* The largest frame the netdev takes: MTU plus the Ethernet header. */
static u32 shca_raw_max_frame(struct shca_dev *sdev, bool tagged)
{
	return READ_ONCE(sdev->ndev->mtu) + ETH_HLEN + (tagged ? VLAN_HLEN : 0);
}

/* Check a WQE and work out the frame length.  Context: SQ engine. */
static enum ib_wc_status shca_raw_check(struct shca_qp *qp,
					const struct shca_send_wqe *hdr,
					const struct shca_sge *sge, u32 *len)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	u64 total;

	if (hdr->opcode != SHCA_OP_SEND ||
	    (hdr->flags & ~(SHCA_WQE_F_SIGNALED | SHCA_WQE_F_SOLICITED |
			    SHCA_WQE_F_FENCE | SHCA_WQE_F_INLINE |
			    SHCA_WQE_F_IP_CSUM)))
		return IB_WC_LOC_QP_OP_ERR;
	if (hdr->flags & SHCA_WQE_F_INLINE) {
		if (hdr->inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_LEN_ERR;
		total = hdr->inline_len;
	} else if (hdr->num_sge > qp->sq.max_sge ||
		   shca_sge_total(sge, hdr->num_sge, &total)) {
		return IB_WC_LOC_LEN_ERR;
	}
	if (total < ETH_HLEN || total > shca_raw_max_frame(sdev, true))
		return IB_WC_LOC_LEN_ERR;
	*len = total;
	return IB_WC_SUCCESS;
}

/* Gather the frame into @buf.  Return: an ib_wc_status. */
static enum ib_wc_status shca_raw_gather(struct shca_qp *qp,
					 const struct shca_send_wqe *hdr,
					 const struct shca_sge *sge,
					 const void *slot, u8 *buf, u32 len)
{
	struct shca_sge_cursor cur = {
		.sdev = to_sdev(qp->ibqp.device),
		.pd = qp->ibqp.pd,
		.sge = sge,
		.num_sge = hdr->num_sge,
	};
	int err;

	if (hdr->flags & SHCA_WQE_F_INLINE) {
		memcpy(buf, slot + sizeof(*hdr), len);
		return IB_WC_SUCCESS;
	}
	err = shca_cursor_copy(&cur, buf, len, false);
	if (!err)
		return IB_WC_SUCCESS;
	return err == -EINVAL || err == -ENOSPC ? IB_WC_LOC_QP_OP_ERR :
						  IB_WC_LOC_PROT_ERR;
}

/*
 * The frame is in @skb (linear, data at the Ethernet header): set what
 * the stack below dev_queue_xmit() looks at, as eth_type_trans() would
 * see it, without pulling the header.
 */
static void shca_raw_skb_setup(struct shca_dev *sdev, struct sk_buff *skb)
{
	const struct ethhdr *eth = (const void *)skb->data;
	__be16 proto = eth->h_proto;

	skb->dev = sdev->ndev;
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, shca_flow_is_tag(proto) ?
			       ETH_HLEN + VLAN_HLEN : ETH_HLEN);
	if (ntohs(proto) < ETH_P_802_3_MIN)
		proto = htons(ETH_P_802_3);
	skb->protocol = proto;
	skb->ip_summed = CHECKSUM_NONE;
}

/**
 * shca_raw_send - execute one send WQE of a RAW_PACKET QP
 * @qp: the QP, in RTS
 * @hdr: a private copy of the WQE header
 * @sge: a private copy of its SGEs
 * @slot: the WQE in the ring (its inline bytes are read from there)
 * @len: set to the frame length
 *
 * Context: SQ engine (process, may sleep).
 * Return: an ib_wc_status.  A frame the netdev drops is lost as on a wire
 * (raw_tx_errs counts it) and completes successfully.
 */
enum ib_wc_status shca_raw_send(struct shca_qp *qp,
				const struct shca_send_wqe *hdr,
				const struct shca_sge *sge, const void *slot,
				u32 *len)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct net_device *ndev = sdev->ndev;
	enum ib_wc_status status;
	struct sk_buff *skb;
	u32 hroom = LL_RESERVED_SPACE(ndev);

	status = shca_raw_check(qp, hdr, sge, len);
	if (status != IB_WC_SUCCESS)
		goto err;
	skb = alloc_skb(hroom + *len + ndev->needed_tailroom, GFP_KERNEL);
	if (!skb) {
		status = IB_WC_LOC_QP_OP_ERR;
		goto err;
	}
	skb_reserve(skb, hroom);
	status = shca_raw_gather(qp, hdr, sge, slot, skb_put(skb, *len), *len);
	if (status == IB_WC_SUCCESS &&
	    *len > shca_raw_max_frame(sdev, shca_flow_is_tag(((struct ethhdr *)
						skb->data)->h_proto)))
		status = IB_WC_LOC_LEN_ERR;
	if (status != IB_WC_SUCCESS) {
		kfree_skb(skb);
		goto err;
	}
	if (hdr->flags & SHCA_WQE_F_IP_CSUM)
		shca_raw_fill_csum(skb->data, skb->len);
	shca_raw_skb_setup(sdev, skb);
	shca_flow_loopback(sdev, qp, skb);
	if (dev_queue_xmit(skb) == NET_XMIT_SUCCESS)
		shca_stat_inc(sdev, SHCA_STAT_RAW_TX_FRAMES);
	else
		shca_stat_inc(sdev, SHCA_STAT_RAW_TX_ERRS);
	return IB_WC_SUCCESS;

err:
	ibdev_dbg(qp->ibqp.device, "qp %u: raw send failed, status %d\n",
		  qp->ibqp.qp_num, status);
	shca_stat_inc(sdev, SHCA_STAT_RAW_TX_ERRS);
	return status;
}

/* Copy a non-linear frame in bounded chunks.  Context: any. */
static int shca_frame_copy_frags(struct shca_sge_cursor *cur,
				 const struct sk_buff *skb)
{
	u8 buf[128];
	u32 off = 0;
	int err;

	while (off < skb->len) {
		u32 n = min_t(u32, sizeof(buf), skb->len - off);

		if (skb_copy_bits(skb, off, buf, n))
			return -EFAULT;
		err = shca_cursor_copy(cur, buf, n, true);
		if (err)
			return err;
		off += n;
	}
	return 0;
}

enum ib_wc_status shca_frame_scatter(struct shca_dev *sdev, struct ib_pd *pd,
				     const struct shca_rwqe *w,
				     const struct sk_buff *skb, u32 *byte_len)
{
	struct shca_sge_cursor cur = {
		.sdev = sdev,
		.pd = pd,
		.sge = w->sge,
		.num_sge = w->hdr.num_sge,
		.nofault = true,
	};
	u64 total;
	int err;

	/* shca_rwqe_pop() checked the count and the lengths */
	shca_sge_total(w->sge, w->hdr.num_sge, &total);
	if (total < skb->len)
		return IB_WC_LOC_LEN_ERR;
	if (skb_is_nonlinear(skb))
		err = shca_frame_copy_frags(&cur, skb);
	else
		err = shca_cursor_copy(&cur, skb->data, skb->len, true);
	if (err)
		return IB_WC_LOC_PROT_ERR;
	*byte_len = skb->len;
	return IB_WC_SUCCESS;
}

static void shca_raw_complete(struct shca_qp *qp, struct shca_cqe *cqe)
{
	cqe->opcode = IB_WC_RECV;
	cqe->qp_num = qp->ibqp.qp_num;
	cqe->port_num = 1;
	shca_cq_post(to_scq(qp->ibqp.recv_cq), cqe, false);
}

/*
 * Context: RQ engine (process, qp->rq_engine held).  The skb is a
 * private linear copy made by flow.c, data at the Ethernet header.
 */
void shca_raw_rx_one(struct shca_qp *qp, struct sk_buff *skb)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_cqe cqe = {};
	struct shca_rwqe w;
	int err;

	lockdep_assert_held(&qp->rq_engine);
	if (shca_qp_is_rss(qp)) {
		shca_rss_rx_one(qp, skb);
		return;
	}
	if (!shca_raw_qp_ready(qp)) {
		shca_stat_inc(sdev, SHCA_STAT_FLOW_RX_DROPPED);
		return;
	}
	err = shca_rq_pop(qp, &w);
	if (err && err != -EBADMSG) {
		shca_stat_inc(sdev, err == -ENOENT ? SHCA_STAT_FLOW_RX_NO_WQE :
						     SHCA_STAT_FLOW_RX_DROPPED);
		if (err == -EIO)
			shca_rq_broken(qp);
		return;
	}
	cqe.wr_id = w.hdr.wr_id;
	cqe.status = err ? IB_WC_LOC_QP_OP_ERR :
			   shca_frame_scatter(sdev, shca_rq_pd(qp), &w, skb,
					      &cqe.byte_len);
	if (cqe.status == IB_WC_SUCCESS) {
		if (!skb_is_nonlinear(skb) && shca_raw_csum_ok(skb->data, skb->len))
			cqe.flags |= SHCA_CQE_F_IP_CSUM_OK;
		shca_stat_inc(sdev, SHCA_STAT_FLOW_RX_FRAMES);
	}
	shca_raw_complete(qp, &cqe);
	if (cqe.status != IB_WC_SUCCESS && cqe.status != IB_WC_LOC_LEN_ERR)
		shca_qp_set_error(qp);
}
