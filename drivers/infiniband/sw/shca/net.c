// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: RoCE v2 transport sockets, routing (shca_path_resolve(), and a
 * connected QP's cached route, shca_qp_path()) and IP/UDP encapsulation.
 *
 * One pair of UDP tunnel sockets (IPv4 and IPv6, port 4791) exists per
 * network namespace that holds at least one shca device.  The pairs live
 * on a refcounted list: the first device of a namespace opens them, the
 * last one closes them.  Kernel sockets hold no reference on their
 * namespace, so the pernet exit hook closes the sockets of a dying
 * namespace early; its devices then simply receive nothing until they
 * are gone too.
 *
 * Transmission builds IP and UDP headers by hand, because the ICRC covers
 * them, and hands the datagram to ip_local_out()/ip6_local_out().  Over a
 * veth, that call also runs the receive side (backlog, IP, UDP, shca_rcv)
 * on the same CPU, so packets with a payload are handed to the IP stack by
 * a device work item (tx_work) while the engine builds the next ones;
 * tx_work always runs on one CPU of its own (per device), so that none of
 * its packets can overtake the ones it left in another CPU's backlog;
 * small packets (ACKs, short messages), and those of a conversing
 * consumer whose request its own thread then executes at a destination
 * on this host (rx_demux.c, shca_rx_catch_begin()), go out inline while
 * nothing is queued, so a round trip takes no extra hop.  Where nothing
 * observes single packets, tx_work sends runs of one flow's packets as
 * UDP GSO datagrams (shca_tx_take(), gso_logic.h): over a link inside the
 * host one trip through the stack and the veth, through a NIC one trip
 * through the stack and one doorbell of its driver for the run.
 */
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "shca.h"
#include "shca_trace.h"
#include "direct.h"
#include "gso_logic.h"
#include "roce.h"
#include "wire.h"

#define SHCA_TX_INLINE_MAX	256	/* bytes: smaller packets may go inline */
#define SHCA_TX_QUEUE_MAX	4096	/* packets queued for tx_work, at most */
#define SHCA_TX_BATCH		16	/* packets an engine run holds back */
#define SHCA_TX_BUDGET		64	/* packets between two cond_resched() */
#define SHCA_GSO_SEGS_MAX	64	/* packets in one GSO datagram, at most */
#define SHCA_GSO_SCAN		256	/* queued packets looked at for one */

static bool shca_wire_gso = true;
module_param_named(wire_gso, shca_wire_gso, bool, 0644);
MODULE_PARM_DESC(wire_gso,
		 "send runs of wire packets of one flow as UDP GSO datagrams when nothing observes single packets on the way (default: 1)");

/*
 * The devices' tx_work: bound, so each runs on its device's CPU (the order
 * of a veth's packets is that of the backlog of the CPU that sent them);
 * CPU_INTENSIVE, as a long run must not hold back the completion events
 * of its CPU (shca_comp_wq); MEM_RECLAIM for the storage ULPs' packets.
 */
static struct workqueue_struct *shca_tx_wq;
static atomic_t shca_tx_cpus = ATOMIC_INIT(0);

/* The sockets of one network namespace. */
struct shca_net_sock {
	struct list_head list;		/* shca_net_socks */
	struct net *net;		/* identity only, no reference */
	unsigned int users;		/* devices of this namespace */
	struct socket *sk4;
	struct socket *sk6;
};

/* All of them, under shca_net_mutex. */
static LIST_HEAD(shca_net_socks);
static DEFINE_MUTEX(shca_net_mutex);

/*
 * UDP hands us every datagram for port 4791.
 * Context: softirq, RCU read lock held.  Always consumes @skb.
 */
static int shca_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	shca_rcv(skb);
	return 0;
}

static struct socket *shca_sock_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = shca_encap_rcv,
	};
	struct udp_port_cfg pcfg = {
		.local_udp_port = htons(SHCA_ROCE_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		pcfg.family = AF_INET6;
		pcfg.ipv6_v6only = 1;
	} else {
		pcfg.family = AF_INET;
	}
	err = udp_sock_create(net, &pcfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static void shca_sock_close(struct shca_net_sock *ns)
{
	lockdep_assert_held(&shca_net_mutex);
	if (ns->sk6)
		udp_tunnel_sock_release(ns->sk6);
	if (ns->sk4)
		udp_tunnel_sock_release(ns->sk4);
	ns->sk6 = NULL;
	ns->sk4 = NULL;
}

static struct shca_net_sock *shca_net_sock_new(struct net *net)
{
	struct shca_net_sock *ns;
	struct socket *sock;

	lockdep_assert_held(&shca_net_mutex);
	ns = kzalloc(sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return ERR_PTR(-ENOMEM);
	ns->net = net;
	sock = shca_sock_open(net, false);
	if (IS_ERR(sock)) {
		kfree(ns);
		return ERR_CAST(sock);
	}
	ns->sk4 = sock;
	sock = shca_sock_open(net, true);
	if (!IS_ERR(sock))
		ns->sk6 = sock;	/* an IPv6-less namespace still does IPv4 */
	list_add(&ns->list, &shca_net_socks);
	return ns;
}

/*
 * Hand one finished datagram to the IP stack.
 * Context: process or softirq.  Always consumes @skb.
 * Return: 0 if the IP layer took it, else -EIO.
 */
static int shca_ip_out(struct net *net, struct sk_buff *skb)
{
	int err;

	if (skb->protocol == htons(ETH_P_IP))
		err = ip_local_out(net, NULL, skb);
	else
		err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err) ? -EIO : 0;
}

/* UDP payload bytes (BTH to ICRC) of a finished datagram. */
static u32 shca_tx_roce_len(const struct sk_buff *skb)
{
	return skb->len - skb_transport_offset(skb) - sizeof(struct udphdr);
}

/*
 * Do @a and @b belong to one flow: the same output device, and the same
 * IP and UDP headers but for the lengths, the IPv4 ID and the checksums?
 * Not the same dst: the routes of one QP's packets are cached per CPU
 * (qp->dst_cache, and the FIB's per-CPU output routes), so packets built
 * on two CPUs carry two dst entries for one route.  Were they two flows,
 * a run could pass over a QP's earlier packets and reorder it.
 */
static bool shca_tx_same_flow(const struct sk_buff *a,
			      const struct sk_buff *b)
{
	if (skb_dst(a)->dev != skb_dst(b)->dev ||
	    a->protocol != b->protocol ||
	    udp_hdr(a)->source != udp_hdr(b)->source)
		return false;
	if (a->protocol == htons(ETH_P_IP)) {
		const struct iphdr *x = ip_hdr(a), *y = ip_hdr(b);

		return x->saddr == y->saddr && x->daddr == y->daddr &&
		       x->tos == y->tos && x->ttl == y->ttl;
	}
	return !memcmp(ipv6_hdr(a), ipv6_hdr(b), 4) &&
	       ipv6_hdr(a)->hop_limit == ipv6_hdr(b)->hop_limit &&
	       !memcmp(&ipv6_hdr(a)->saddr, &ipv6_hdr(b)->saddr,
		       2 * sizeof(struct in6_addr));
}

/*
 * May runs of packets leave by @dst as GSO datagrams of the fraglist kind
 * (shca_gso_build())?  Over a link inside this host (loopback, a veth;
 * not a netkit, whose programs would see the datagram whole), where the
 * receiving socket's stack cuts them apart; or through a device that
 * cannot take such a datagram itself (no NETIF_F_GSO_FRAGLIST, which no
 * NIC has: only software devices), so that the stack cuts it in software
 * before the driver (validate_xmit_skb()), each packet as it was built,
 * its IPv4 ID and so its ICRC kept; a device that has the feature but is
 * no host link (a bond, a VLAN) might pass it to one that renumbers.
 * Either way only while nothing on the way sees single packets
 * (shca_way_watched()).  Context: tx_work.
 */
static bool shca_tx_gso_way(const struct dst_entry *dst, bool ipv4)
{
	const struct net_device *dev = dst->dev;
	bool nic;

	nic = !(dev->flags & IFF_LOOPBACK) && !shca_dev_is_veth(dev);
	if (nic && (READ_ONCE(dev->features) & NETIF_F_GSO_FRAGLIST))
		return false;
	return !shca_way_watched(dst, ipv4, nic);
}

/*
 * Take the next queued datagram into @run, followed by the later ones of
 * its flow that can share one UDP GSO datagram with it (gso_logic.h):
 * sizes that the stack's segmentation gives back as they are.  Other
 * flows' packets (other QPs) may be passed over; within the flow the
 * order stays, as the first packet that cannot join ends the run.
 * Only when wire_gso is on and the way allows (shca_tx_gso_way()): a
 * tap, netem or netfilter then sees every packet.
 * Context: tx_work.  Return: the number of datagrams taken.
 */
static u32 shca_tx_take(struct shca_dev *sdev, struct sk_buff_head *run)
{
	struct sk_buff_head *q = &sdev->tx_queue;
	struct shca_gso_run r = {};
	struct sk_buff *first, *next, *tmp;
	u32 hlen, max_bytes, max_segs, scan = 0;
	struct net_device *dev;
	unsigned long flags;

	first = skb_dequeue(q);
	if (!first)
		return 0;
	__skb_queue_tail(run, first);
	dev = skb_dst(first)->dev;
	if (!READ_ONCE(shca_wire_gso) || skb_queue_empty_lockless(q) ||
	    !shca_tx_gso_way(skb_dst(first),
			     first->protocol == htons(ETH_P_IP)))
		return 1;
	max_segs = min_t(u32, SHCA_GSO_SEGS_MAX,
			 READ_ONCE(dev->gso_max_segs));
	max_bytes = min_t(u32, READ_ONCE(dev->gso_max_size), U16_MAX);
	hlen = skb_transport_offset(first) + sizeof(struct udphdr);
	if (max_bytes <= hlen)
		return 1;
	max_bytes -= hlen;
	shca_gso_join(&r, shca_tx_roce_len(first), max_bytes, max_segs);
	spin_lock_irqsave(&q->lock, flags);
	skb_queue_walk_safe(q, next, tmp) {
		if (++scan > SHCA_GSO_SCAN)
			break;
		if (!shca_tx_same_flow(first, next))
			continue;
		/* a packet of the flow that cannot join ends the run */
		if (!shca_gso_join(&r, shca_tx_roce_len(next), max_bytes,
				   max_segs))
			break;
		__skb_unlink(next, q);
		__skb_queue_tail(run, next);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return skb_queue_len(run);
}

/*
 * Make @head, the first datagram of a run of @segs, the head of one UDP
 * GSO datagram of the fraglist kind: the others hang on its frag_list,
 * each with its own IP and UDP headers still in front of its data, and
 * the stack's segmentation (skb_segment_list()) only unchains them again,
 * without a copy or a clone.  @head's headers cover the whole datagram
 * until then; its first segment gets its own lengths back.  The IPv4 ID
 * is fixed: every segment keeps the ID its ICRC was computed with.
 */
static void shca_gso_headers(struct sk_buff *head, u32 seg, u32 segs)
{
	u32 ulen = head->len - skb_transport_offset(head);

	udp_hdr(head)->len = htons(ulen);
	if (head->protocol == htons(ETH_P_IP)) {
		ip_hdr(head)->tot_len = htons(head->len);
		ip_send_check(ip_hdr(head));
	} else {
		ipv6_hdr(head)->payload_len = htons(ulen);
	}
	/*
	 * A GSO datagram goes to the device as it is only if it is marked
	 * CHECKSUM_PARTIAL or CHECKSUM_UNNECESSARY (netif_needs_gso()); with
	 * the zero UDP checksums of every packet, the latter, as the
	 * stack's own fraglist GRO marks its datagrams.
	 */
	head->ip_summed = CHECKSUM_UNNECESSARY;
	skb_shinfo(head)->gso_size = seg;
	skb_shinfo(head)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	if (head->protocol == htons(ETH_P_IP))
		skb_shinfo(head)->gso_type |= SKB_GSO_TCP_FIXEDID;
	skb_shinfo(head)->gso_segs = segs;
}

/*
 * Chain the later datagrams of @run behind its first as one UDP GSO
 * datagram (shca_gso_headers()).  Each chained one keeps its headers in
 * front of its data, where the segmentation pushes back to them.
 * Return: the datagram; @run is empty.
 */
static struct sk_buff *shca_gso_build(struct sk_buff_head *run)
{
	struct sk_buff *head = __skb_dequeue(run), *skb, **tail;
	u32 hlen = skb_transport_offset(head) + sizeof(struct udphdr);
	u32 seg = shca_tx_roce_len(head), segs = skb_queue_len(run) + 1;

	tail = &skb_shinfo(head)->frag_list;
	while ((skb = __skb_dequeue(run))) {
		skb_dst_drop(skb);
		__skb_pull(skb, hlen);
		*tail = skb;
		tail = &skb->next;
		head->data_len += skb->len;
		head->len += skb->len;
		head->truesize += skb->truesize;
	}
	shca_gso_headers(head, seg, segs);
	return head;
}

/*
 * Send @run: one datagram as it is, several as one GSO datagram.
 * Consumes the datagrams.
 */
static void shca_tx_run(struct shca_dev *sdev, struct net *net,
			struct sk_buff_head *run)
{
	struct sk_buff *skb;
	u32 n;

	n = skb_queue_len(run);
	if (n > 1) {
		skb = shca_gso_build(run);
		shca_stat_inc(sdev, SHCA_STAT_TX_GSO_SENDS);
		shca_stat_add(sdev, SHCA_STAT_TX_GSO_PACKETS, n);
		if (shca_ip_out(net, skb))
			shca_stat_add(sdev, SHCA_STAT_TX_ERR, n);
		return;
	}
	skb = __skb_dequeue(run);
	if (skb && shca_ip_out(net, skb))
		shca_stat_inc(sdev, SHCA_STAT_TX_ERR);
}

/*
 * The device's transmit work: send what the engines queued, in order,
 * until the queue is empty; runs of one flow go as UDP GSO datagrams
 * (shca_tx_take()).  It yields with cond_resched() rather than requeue
 * itself.  A packet is counted in tx_inflight until the
 * IP stack has taken it, so an inline sender never overtakes it.  A
 * packet the IP stack refuses (already counted in tx_packets) is counted
 * in tx_err too.
 * Context: process (shca_tx_wq, on sdev->tx_cpu); one run at a time.
 */
static void shca_tx_work(struct work_struct *work)
{
	struct shca_dev *sdev = container_of(work, struct shca_dev, tx_work);
	struct net *net = dev_net(sdev->ndev);
	struct sk_buff_head run;
	u32 n, sent = 0;

	__skb_queue_head_init(&run);
	while ((n = shca_tx_take(sdev, &run))) {
		shca_tx_run(sdev, net, &run);
		atomic_sub(n, &sdev->tx_inflight);
		sent += n;
		if (sent >= SHCA_TX_BUDGET) {
			sent = 0;
			cond_resched();
		}
	}
}

/*
 * Run tx_work on the device's CPU; on another one only while that CPU is
 * offline.  Context: any.
 */
static void shca_tx_kick(struct shca_dev *sdev)
{
	int cpu = READ_ONCE(sdev->tx_cpu);

	queue_work_on(cpu_online(cpu) ? cpu : WORK_CPU_UNBOUND, shca_tx_wq,
		      &sdev->tx_work);
}

/*
 * Send a datagram in this thread, watching for what comes back up this
 * host's stack meanwhile (rx_demux.c, shca_rx_catch_begin()): responses for
 * the engine run of this thread, and with @want_req a request left in
 * @inl.  From a softirq, or with BHs disabled, nothing can come back
 * inside the send, and nothing is watched.
 * Context: process or softirq.  Always consumes @skb.
 */
static int shca_tx_now(struct net *net, struct sk_buff *skb, bool want_req,
		       struct shca_rx_inline *inl)
{
	int err;

	if (!preemptible())
		return shca_ip_out(net, skb);
	shca_rx_catch_begin(want_req);
	err = shca_ip_out(net, skb);
	shca_rx_catch_end(inl);
	return err;
}

/**
 * shca_tx_flush - hand an engine run's held-back packets to tx_work
 * @sdev: the device of the packets
 * @batch: a QP's batch (shca_path.batch), owned by the caller
 *
 * A run holds back its wire packets, SHCA_TX_BATCH at most, and passes
 * them on together: one lock and one wakeup of tx_work for all of them,
 * and tx_work finds a run of one flow to send as one GSO datagram.  They
 * are counted in tx_inflight from the start, so that no packet sent
 * inline overtakes them.  A small packet (an ACK, a READ request) passes
 * them on at once, as its peer waits for it.
 * Context: process or softirq; the owner of @batch (an SQ or RQ engine
 * run, which flushes before it ends).
 */
void shca_tx_flush(struct shca_dev *sdev, struct sk_buff_head *batch)
{
	unsigned long flags;

	if (skb_queue_empty(batch))
		return;
	spin_lock_irqsave(&sdev->tx_queue.lock, flags);
	skb_queue_splice_tail_init(batch, &sdev->tx_queue);
	spin_unlock_irqrestore(&sdev->tx_queue.lock, flags);
	shca_tx_kick(sdev);
}

/*
 * Send a finished wire datagram: inline if nothing is queued (or being
 * sent, or held back in @batch) before it and it is small or its sender
 * runs the request at a destination on this host itself (@want_req: a
 * conversing consumer's SQ engine run, as on the direct path), else
 * through tx_work, held back in @batch first if there is one.  A
 * request left to the sender is in @inl (inl->qp NULL if none).
 * Context: process or softirq; the owner of @batch, if any.  Always
 * consumes @skb.
 */
static int shca_tx(struct shca_dev *sdev, struct net *net,
		   struct sk_buff *skb, bool want_req,
		   struct sk_buff_head *batch, struct shca_rx_inline *inl)
{
	if ((want_req || skb->len <= SHCA_TX_INLINE_MAX) &&
	    !atomic_read(&sdev->tx_inflight))
		return shca_tx_now(net, skb, want_req, inl);
	if (atomic_inc_return(&sdev->tx_inflight) > SHCA_TX_QUEUE_MAX) {
		atomic_dec(&sdev->tx_inflight);
		kfree_skb(skb);
		return -ENOBUFS;
	}
	if (batch) {
		__skb_queue_tail(batch, skb);
		/* a small one (an ACK, a READ request) is not held back */
		if (skb_queue_len(batch) >= SHCA_TX_BATCH ||
		    skb->len <= SHCA_TX_INLINE_MAX)
			shca_tx_flush(sdev, batch);
		return 0;
	}
	skb_queue_tail(&sdev->tx_queue, skb);
	shca_tx_kick(sdev);
	return 0;
}

/* Context: process (device creation). */
static void shca_tx_init(struct shca_dev *sdev)
{
	skb_queue_head_init(&sdev->tx_queue);
	INIT_WORK(&sdev->tx_work, shca_tx_work);
	/* spread the devices over the CPUs */
	sdev->tx_cpu = cpumask_local_spread(atomic_inc_return(&shca_tx_cpus),
					    NUMA_NO_NODE);
	atomic_set(&sdev->tx_inflight, 0);
}

/*
 * Device teardown, once no QP is left to queue packets: stop tx_work and
 * drop what it did not send.  shca_tx_init() ran: shca_net_put() only
 * follows shca_net_get() (shca_dealloc_driver()).
 * Context: process, may sleep.
 */
static void shca_tx_fini(struct shca_dev *sdev)
{
	cancel_work_sync(&sdev->tx_work);
	skb_queue_purge(&sdev->tx_queue);
	atomic_set(&sdev->tx_inflight, 0);
}

/**
 * shca_net_get - make sure the namespace of @sdev's netdev has sockets
 * @sdev: device being created
 *
 * Context: process, may sleep.
 * Return: 0 or a negative errno (e.g. -EADDRINUSE: rdma_rxe has the port).
 */
int shca_net_get(struct shca_dev *sdev)
{
	struct net *net = dev_net(sdev->ndev);
	struct shca_net_sock *ns;
	int err = 0;

	shca_tx_init(sdev);
	mutex_lock(&shca_net_mutex);
	list_for_each_entry(ns, &shca_net_socks, list)
		if (ns->net == net)
			goto found;
	ns = shca_net_sock_new(net);
	if (IS_ERR(ns)) {
		err = PTR_ERR(ns);
		goto out;
	}
found:
	ns->users++;
	sdev->nsock = ns;
out:
	mutex_unlock(&shca_net_mutex);
	return err;
}

/* Context: process, may sleep. */
void shca_net_put(struct shca_dev *sdev)
{
	struct shca_net_sock *ns = sdev->nsock;

	shca_tx_fini(sdev);
	if (!ns)
		return;
	mutex_lock(&shca_net_mutex);
	if (!--ns->users) {
		shca_sock_close(ns);
		list_del(&ns->list);
		kfree(ns);
	}
	mutex_unlock(&shca_net_mutex);
	sdev->nsock = NULL;
}

/* A namespace goes away: close its sockets, devices keep the entry. */
static void __net_exit shca_net_ns_exit(struct net *net)
{
	struct shca_net_sock *ns;

	mutex_lock(&shca_net_mutex);
	list_for_each_entry(ns, &shca_net_socks, list) {
		if (ns->net == net) {
			shca_sock_close(ns);
			ns->net = NULL;
		}
	}
	mutex_unlock(&shca_net_mutex);
}

static struct pernet_operations shca_net_ops = {
	.exit = shca_net_ns_exit,
};

int shca_net_init(void)
{
	int err;

	shca_tx_wq = alloc_workqueue("shca_tx", WQ_HIGHPRI | WQ_CPU_INTENSIVE |
				     WQ_MEM_RECLAIM, 0);
	if (!shca_tx_wq)
		return -ENOMEM;
	err = register_pernet_subsys(&shca_net_ops);
	if (err)
		destroy_workqueue(shca_tx_wq);
	return err;
}

void shca_net_exit(void)
{
	unregister_pernet_subsys(&shca_net_ops);
	destroy_workqueue(shca_tx_wq);
}

/* ------------------------------------------------------------------ */
/* Transmit                                                            */
/* ------------------------------------------------------------------ */

static int shca_route4(struct net *net, struct shca_path *path)
{
	struct flowi4 fl = {
		.daddr = path->daddr.v4,
		.saddr = path->saddr.v4,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;

	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	path->dst = &rt->dst;
	return 0;
}

static int shca_route6(struct net *net, struct net_device *ndev,
		       struct shca_path *path)
{
	struct flowi6 fl = {
		.daddr = path->daddr.v6,
		.saddr = path->saddr.v6,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;

	if (!IS_ENABLED(CONFIG_IPV6) || !ipv6_stub->ipv6_dst_lookup_flow)
		return -EAFNOSUPPORT;
	if (ipv6_addr_type(&fl.daddr) & IPV6_ADDR_LINKLOCAL)
		fl.flowi6_oif = ndev->ifindex;
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	path->dst = dst;
	return 0;
}

/**
 * shca_path_route - route a RoCE v2 packet in a namespace
 * @net: the namespace the packet leaves from
 * @ndev: its device there, whose link an IPv6 link-local address is on
 * @path: ipv4, saddr and daddr set; path->dst filled in, referenced, on
 *	success
 *
 * Context: process or softirq; does not sleep.
 * Return: 0 or a negative errno.
 */
int shca_path_route(struct net *net, struct net_device *ndev,
		    struct shca_path *path)
{
	return path->ipv4 ? shca_route4(net, path) :
			    shca_route6(net, ndev, path);
}

/**
 * shca_path_resolve - route a RoCE v2 packet from @sgid to @dgid
 * @sdev: sending device
 * @sgid: source GID (an address of the device's netdev)
 * @dgid: destination GID
 * @path: filled in; path->dst holds a reference on success
 *
 * IPv4-mapped GIDs travel over IPv4, everything else over IPv6.
 * Context: process or softirq; does not sleep.
 * Return: 0 or a negative errno.
 */
int shca_path_resolve(struct shca_dev *sdev, const union ib_gid *sgid,
		      const union ib_gid *dgid, struct shca_path *path)
{
	path->ipv4 = shca_gid_is_v4mapped(dgid);
	if (path->ipv4 != shca_gid_is_v4mapped(sgid))
		return -EAFNOSUPPORT;
	if (path->ipv4) {
		path->saddr.v4 = shca_gid_to_ipv4(sgid);
		path->daddr.v4 = shca_gid_to_ipv4(dgid);
	} else {
		memcpy(&path->saddr.v6, sgid->raw, sizeof(path->saddr.v6));
		memcpy(&path->daddr.v6, dgid->raw, sizeof(path->daddr.v6));
	}
	return shca_path_route(dev_net(sdev->ndev), sdev->ndev, path);
}

/* The UDP source port of a QP's packets: a flow hash of the QP pair. */
__be16 shca_path_sport(u32 qpn, u32 dqpn)
{
	return htons(0xc000 | (jhash_2words(qpn, dqpn, 0) & 0x3fff));
}

/*
 * The cached route of a connected QP to @dgid, if still valid: the
 * source address comes with it.
 * Return: true on a hit (path->dst held).
 */
static bool shca_qp_path_cached(struct shca_qp *qp, const union ib_gid *dgid,
				struct shca_path *path)
{
	struct rtable *rt;

	path->ipv4 = shca_gid_is_v4mapped(dgid);
	path->dst = NULL;
	local_bh_disable();	/* the cache is per CPU */
	if (path->ipv4) {
		rt = dst_cache_get_ip4(&qp->dst_cache, &path->saddr.v4);
		if (rt)
			path->dst = &rt->dst;
		path->daddr.v4 = shca_gid_to_ipv4(dgid);
#if IS_ENABLED(CONFIG_IPV6)
	} else {
		path->dst = dst_cache_get_ip6(&qp->dst_cache,
					      &path->saddr.v6);
		memcpy(&path->daddr.v6, dgid->raw, sizeof(path->daddr.v6));
#endif
	}
	local_bh_enable();
	return path->dst;
}

/* Remember a resolved route of a connected QP. */
static void shca_qp_path_cache(struct shca_qp *qp, struct shca_path *path)
{
	local_bh_disable();
	if (path->ipv4)
		dst_cache_set_ip4(&qp->dst_cache, path->dst, path->saddr.v4);
#if IS_ENABLED(CONFIG_IPV6)
	else
		dst_cache_set_ip6(&qp->dst_cache, path->dst, &path->saddr.v6);
#endif
	local_bh_enable();
}

/**
 * shca_qp_path - route a packet of a connected (RC/UC/XRC) QP
 * @qp: QP past RTR; its primary path is in qp->av
 * @path: filled in; path->dst is held and consumed by shca_skb_xmit()
 *
 * The packet goes from the path's local GID (the sgid that modify_qp
 * stored) to its remote one.  The route and source address are cached
 * per QP (qp->dst_cache, reset when the address vector changes; a route
 * change invalidates it too).
 * Context: process (an engine work item).
 * Return: 0, or a negative errno if there is no route.
 */
int shca_qp_path(struct shca_qp *qp, struct shca_path *path)
{
	u32 dqpn = READ_ONCE(qp->attr.dest_qp_num);
	struct shca_qp_av av;
	int err;

	shca_qp_av_read(qp, &av);
	if (av.addrs.family == SHCA_PATH_NONE)
		return -EHOSTUNREACH;
	if (!shca_qp_path_cached(qp, &av.addrs.remote, path)) {
		err = shca_path_resolve(to_sdev(qp->ibqp.device),
					&av.addrs.local, &av.addrs.remote,
					path);
		if (err)
			return err;
		shca_qp_path_cache(qp, path);
	}
	path->sport = shca_path_sport(qp->ibqp.qp_num, dqpn);
	path->tclass = av.tclass;
	path->flow_label = av.flow_label;
	return 0;
}

static unsigned int shca_ip_hlen(const struct shca_path *path)
{
	return path->ipv4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
}

/**
 * shca_skb_alloc - allocate a packet with room for IP and UDP in front
 * @sdev: sending device
 * @path: resolved path (selects the IP version)
 * @len: bytes from the BTH up to and including the ICRC
 *
 * The data goes into a page fragment of this CPU's cache when one is at
 * hand (__netdev_alloc_skb(), without reclaim), else into a kmalloc()ed
 * head: the fragment saves a slab allocation and its free per packet.
 *
 * Return: an skb whose data is @len bytes (uninitialised), or NULL.
 * Context: process; may sleep.
 */
struct sk_buff *shca_skb_alloc(struct shca_dev *sdev,
			       const struct shca_path *path, unsigned int len)
{
	unsigned int hroom = LL_RESERVED_SPACE(path->dst->dev) +
			     shca_ip_hlen(path) + sizeof(struct udphdr);
	unsigned int size = hroom + len + path->dst->dev->needed_tailroom;
	struct sk_buff *skb;

	skb = __netdev_alloc_skb(NULL, size, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		skb = alloc_skb(size, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, hroom);
	skb_put(skb, len);
	return skb;
}

static void shca_push_udp(struct sk_buff *skb, const struct shca_path *path)
{
	struct udphdr *uh;

	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = path->sport;
	uh->dest = htons(SHCA_ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* allowed for RoCE v2; the ICRC protects */
}

static void shca_push_ipv4(struct net *net, struct sk_buff *skb,
			   const struct shca_path *path)
{
	struct iphdr *iph;

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = path->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ip4_dst_hoplimit(path->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = path->saddr.v4;
	iph->daddr = path->daddr.v4;
	ip_select_ident(net, skb, NULL);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void shca_push_ipv6(struct sk_buff *skb, const struct shca_path *path)
{
	struct ipv6hdr *ip6h;

	skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, path->tclass, htonl(path->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ip6_dst_hoplimit(path->dst);
	ip6h->saddr = path->saddr.v6;
	ip6h->daddr = path->daddr.v6;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/**
 * shca_skb_xmit - encapsulate and send one RoCE v2 packet
 * @sdev: sending device
 * @path: resolved path; its dst reference moves to the skb (or is
 *	dropped on the direct path, path->direct, which skips the ICRC)
 * @skb: from shca_skb_alloc(), BTH through pad filled in
 *
 * With path->rx_inline, a request that comes back to a device of this
 * host in this thread is executed there by this thread (shca_rq_inline()),
 * on the wire as on the direct path.  With path->batch, a wire packet
 * may wait there for shca_tx_flush() (shca_tx()).  A wire packet is
 * counted in path->wire_out, if given, unless it could not be sent.
 * Context: process or softirq; with path->rx_inline, an SQ engine run
 * holding nothing but its qp->sq_engine, which may sleep.  Always
 * consumes @skb.
 * Return: 0 if the IP layer took the packet (or tx_work will hand it
 * over), else a negative errno.
 */
int shca_skb_xmit(struct shca_dev *sdev, struct shca_path *path,
		  struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	struct shca_rx_inline inl = {};
	int err;

	shca_push_udp(skb, path);
	if (path->ipv4)
		shca_push_ipv4(net, skb, path);
	else
		shca_push_ipv6(skb, path);
	trace_shca_pkt(sdev, (struct shca_bth *)(udp_hdr(skb) + 1),
		       ntohs(udp_hdr(skb)->len) - sizeof(struct udphdr), true,
		       path->direct ? SHCA_TRACE_DIRECT : SHCA_TRACE_WIRE);
	if (path->direct) {
		/* held-back wire packets go first (none, at a switch) */
		if (path->batch)
			shca_tx_flush(sdev, path->batch);
		return shca_direct_xmit(sdev, path, skb);
	}
	err = shca_icrc_set(skb_network_header(skb), skb->len);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	skb->ip_summed = CHECKSUM_NONE;
	skb->dev = path->dst->dev;
	skb_dst_set(skb, path->dst);
	path->dst = NULL;
	/* counted before it may arrive; uncounted if never sent */
	if (path->wire_out)
		atomic_inc(path->wire_out);
	err = shca_tx(sdev, net, skb, path->rx_inline, path->batch, &inl);
	if (err && path->wire_out)
		atomic_dec(path->wire_out);
	if (inl.qp)
		shca_rq_inline(inl.qp, inl.skb);
	return err;
}
