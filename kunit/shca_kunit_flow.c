// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: flow steering's pure part (flow_logic.h) - frame parsing (tags,
 * IPv4 with options and fragments, IPv6, TCP/UDP, cut-short headers),
 * spec compilation (every type, sizes, masks, bad input) and matching
 * with masks, tags and priorities.
 */
#include <kunit/test.h>
#include <linux/stddef.h>

#include "flow_logic.h"

static const u8 dmac[ETH_ALEN] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const u8 smac[ETH_ALEN] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee };

struct frame {
	u8 b[256];
	u32 len;
};

static void put(struct frame *f, const void *p, u32 n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put16(struct frame *f, u16 v)
{
	__be16 x = htons(v);

	put(f, &x, 2);
}

static void eth(struct frame *f, u16 type, int vid)
{
	f->len = 0;
	put(f, dmac, ETH_ALEN);
	put(f, smac, ETH_ALEN);
	if (vid >= 0) {
		put16(f, ETH_P_8021Q);
		put16(f, (3 << 13) | vid);
	}
	put16(f, type);
}

/* IPv4 header with @opt_words of options, frag_off as given. */
static void ipv4(struct frame *f, u8 proto, u32 opt_words, u16 frag_off)
{
	struct iphdr ip = {
		.version = 4,
		.ihl = 5 + opt_words,
		.tos = 0x28,
		.ttl = 64,
		.protocol = proto,
		.frag_off = htons(frag_off),
		.saddr = htonl(0x0a000001),
		.daddr = htonl(0x0a000002),
	};
	u8 opts[40] = {};

	put(f, &ip, sizeof(ip));
	put(f, opts, opt_words * 4);
}

static void ipv6(struct frame *f, u8 next)
{
	struct ipv6hdr ip = {
		.version = 6,
		.nexthdr = next,
		.hop_limit = 7,
	};

	ip.flow_lbl[0] = 0x0a;	/* tclass low nibble 0, label 0xa1234 */
	ip.flow_lbl[1] = 0x12;
	ip.flow_lbl[2] = 0x34;
	ip.saddr.s6_addr[15] = 1;
	ip.daddr.s6_addr[15] = 2;
	put(f, &ip, sizeof(ip));
}

static void udp(struct frame *f, u16 sport, u16 dport)
{
	struct udphdr h = { .source = htons(sport), .dest = htons(dport) };

	put(f, &h, sizeof(h));
}

static void tcp(struct frame *f, u16 sport, u16 dport)
{
	struct tcphdr h = { .source = htons(sport), .dest = htons(dport),
			    .doff = 5 };

	put(f, &h, sizeof(h));
}

static void shca_flow_test_parse(struct kunit *test)
{
	struct shca_flow_pkt p;
	struct frame f;

	/* shorter than an Ethernet header, or than a tag */
	eth(&f, ETH_P_IP, -1);
	KUNIT_EXPECT_EQ(test, shca_flow_parse(f.b, ETH_HLEN - 1, &p), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_flow_parse(f.b, 0, &p), -EINVAL);
	eth(&f, ETH_P_IP, 5);
	KUNIT_EXPECT_EQ(test, shca_flow_parse(f.b, ETH_HLEN + 2, &p), -EINVAL);

	/* bare Ethernet: an L2 header and nothing else */
	eth(&f, 0x88b5, -1);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 0);
	KUNIT_EXPECT_FALSE(test, p.malformed);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.ether_type), 0x88b5);
	KUNIT_EXPECT_EQ(test, memcmp(p.key.dmac, dmac, ETH_ALEN), 0);
	KUNIT_EXPECT_EQ(test, memcmp(p.key.smac, smac, ETH_ALEN), 0);

	/* tagged IPv4/UDP */
	eth(&f, ETH_P_IP, 100);
	ipv4(&f, IPPROTO_UDP, 0, 0x4000);
	udp(&f, 1000, 2000);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_TRUE(test, p.vlan);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.vlan_tag), (3 << 13) | 100);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.ether_type), ETH_P_IP);
	KUNIT_EXPECT_EQ(test, p.l3, 4);
	KUNIT_EXPECT_EQ(test, p.l3_off, ETH_HLEN + VLAN_HLEN);
	KUNIT_EXPECT_EQ(test, p.l4, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, p.l4_off, ETH_HLEN + VLAN_HLEN + 20);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.l4_sport), 1000);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.l4_dport), 2000);
	KUNIT_EXPECT_EQ(test, ntohl(p.key.v4_src), 0x0a000001);
	KUNIT_EXPECT_EQ(test, ntohl(p.key.v4_dst), 0x0a000002);
	KUNIT_EXPECT_EQ(test, p.key.v4_flags, 2);	/* DF */
	KUNIT_EXPECT_EQ(test, p.key.v4_tos, 0x28);
	KUNIT_EXPECT_EQ(test, p.key.v4_ttl, 64);

	/* IPv4 options move the L4 header */
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_TCP, 3, 0);
	tcp(&f, 80, 8080);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l4, IPPROTO_TCP);
	KUNIT_EXPECT_EQ(test, p.l4_off, ETH_HLEN + 32);
	KUNIT_EXPECT_EQ(test, ntohs(p.key.l4_dport), 8080);
	/* cut short in the TCP header: L3 only, malformed */
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len - 1, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 4);
	KUNIT_EXPECT_EQ(test, p.l4, 0);
	KUNIT_EXPECT_TRUE(test, p.malformed);
	/* cut short in the options */
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, ETH_HLEN + 24, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 0);
	KUNIT_EXPECT_TRUE(test, p.malformed);

	/* a bad IHL, and a later fragment (no L4 header) */
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	udp(&f, 1, 2);
	f.b[ETH_HLEN] = 0x44;
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 0);
	KUNIT_EXPECT_TRUE(test, p.malformed);
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0x2000 | 10);
	udp(&f, 1, 2);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 4);
	KUNIT_EXPECT_EQ(test, p.l4, 0);
	KUNIT_EXPECT_FALSE(test, p.malformed);

	/* IPv6/UDP; an extension header is not walked */
	eth(&f, ETH_P_IPV6, -1);
	ipv6(&f, IPPROTO_UDP);
	udp(&f, 5, 6);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 6);
	KUNIT_EXPECT_EQ(test, p.l4, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, ntohl(p.key.v6_flow_label), 0xa1234);
	KUNIT_EXPECT_EQ(test, p.key.v6_hop_limit, 7);
	KUNIT_EXPECT_EQ(test, p.key.v6_src[15], 1);
	KUNIT_EXPECT_EQ(test, p.key.v6_dst[15], 2);
	eth(&f, ETH_P_IPV6, -1);
	ipv6(&f, NEXTHDR_HOP);
	udp(&f, 5, 6);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, f.len, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 6);
	KUNIT_EXPECT_EQ(test, p.l4, 0);
	KUNIT_ASSERT_EQ(test, shca_flow_parse(f.b, ETH_HLEN + 39, &p), 0);
	KUNIT_EXPECT_EQ(test, p.l3, 0);
	KUNIT_EXPECT_TRUE(test, p.malformed);
}

/* A buffer of specs as ib_uverbs lays them out after the attribute. */
struct specs {
	u8 b[512];
	u32 len;
	u32 num;
};

static void *add_spec(struct specs *s, u32 type, u16 size)
{
	union ib_flow_spec *sp = (void *)(s->b + s->len);

	memset(sp, 0, size);
	sp->type = type;
	sp->size = size;
	s->len += size;
	s->num++;
	return sp;
}

static struct ib_flow_spec_eth *add_eth(struct specs *s)
{
	return add_spec(s, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth));
}

static struct ib_flow_spec_ipv4 *add_v4(struct specs *s)
{
	return add_spec(s, IB_FLOW_SPEC_IPV4, sizeof(struct ib_flow_spec_ipv4));
}

static struct ib_flow_spec_ipv6 *add_v6(struct specs *s)
{
	return add_spec(s, IB_FLOW_SPEC_IPV6, sizeof(struct ib_flow_spec_ipv6));
}

static struct ib_flow_spec_tcp_udp *add_l4(struct specs *s, u32 type)
{
	return add_spec(s, type, sizeof(struct ib_flow_spec_tcp_udp));
}

static int compile(struct specs *s, struct shca_flow_match *m)
{
	return shca_flow_compile(s->b, s->len, s->num, m);
}

static void shca_flow_test_compile(struct kunit *test)
{
	struct shca_flow_match m;
	struct specs s = {};
	struct ib_flow_spec_ipv4 *v4;
	struct ib_flow_spec_ipv6 *v6;

	/* no specs: matches everything */
	KUNIT_EXPECT_EQ(test, compile(&s, &m), 0);
	/* every type once */
	add_eth(&s);
	add_v4(&s);
	add_l4(&s, IB_FLOW_SPEC_UDP);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), 0);
	KUNIT_EXPECT_EQ(test, m.l3, 4);
	KUNIT_EXPECT_EQ(test, m.l4, IPPROTO_UDP);
	memset(&s, 0, sizeof(s));
	add_v6(&s);
	add_l4(&s, IB_FLOW_SPEC_TCP);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), 0);
	KUNIT_EXPECT_EQ(test, m.l3, 6);
	KUNIT_EXPECT_EQ(test, m.l4, IPPROTO_TCP);

	/* repeated layers */
	memset(&s, 0, sizeof(s));
	add_eth(&s);
	add_eth(&s);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	memset(&s, 0, sizeof(s));
	add_v4(&s);
	add_v6(&s);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	memset(&s, 0, sizeof(s));
	add_l4(&s, IB_FLOW_SPEC_TCP);
	add_l4(&s, IB_FLOW_SPEC_UDP);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);

	/* sizes: wrong, zero, past the end, bytes left over */
	memset(&s, 0, sizeof(s));
	add_spec(&s, IB_FLOW_SPEC_ETH, sizeof(struct ib_flow_spec_eth) - 4);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	memset(&s, 0, sizeof(s));
	add_spec(&s, IB_FLOW_SPEC_ETH, 0);
	s.len = 16;
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	memset(&s, 0, sizeof(s));
	add_eth(&s);
	s.len -= 1;
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	memset(&s, 0, sizeof(s));
	add_eth(&s);
	s.num = 2;		/* the count runs past the specs */
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	s.num = 1;
	s.len += 8;		/* and the other way round */
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);
	s.num = 0;
	s.len = 4;
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EINVAL);

	/* unknown types, inner headers */
	memset(&s, 0, sizeof(s));
	add_spec(&s, IB_FLOW_SPEC_VXLAN_TUNNEL,
		 sizeof(struct ib_flow_spec_tunnel));
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EOPNOTSUPP);
	memset(&s, 0, sizeof(s));
	add_spec(&s, IB_FLOW_SPEC_INNER | IB_FLOW_SPEC_ETH,
		 sizeof(struct ib_flow_spec_eth));
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EOPNOTSUPP);
	memset(&s, 0, sizeof(s));
	add_spec(&s, 0x7777, 16);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EOPNOTSUPP);

	/* masks on bits that do not exist */
	memset(&s, 0, sizeof(s));
	v4 = add_v4(&s);
	v4->mask.flags = 0x8;
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EOPNOTSUPP);
	v4->mask.flags = 0x7;
	KUNIT_EXPECT_EQ(test, compile(&s, &m), 0);
	memset(&s, 0, sizeof(s));
	v6 = add_v6(&s);
	v6->mask.flow_label = htonl(0x100000);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), -EOPNOTSUPP);
	v6->mask.flow_label = htonl(0xfffff);
	KUNIT_EXPECT_EQ(test, compile(&s, &m), 0);
}

static bool frame_matches(struct frame *f, struct specs *s)
{
	struct shca_flow_match m;
	struct shca_flow_pkt p;

	if (compile(s, &m) || shca_flow_parse(f->b, f->len, &p))
		return false;
	return shca_flow_matches(&m, &p);
}

static void shca_flow_test_match_l2(struct kunit *test)
{
	struct ib_flow_spec_eth *e;
	struct specs s = {};
	struct frame f;

	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	udp(&f, 1, 2);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));	/* no specs */

	e = add_eth(&s);
	memcpy(e->val.dst_mac, dmac, ETH_ALEN);
	eth_broadcast_addr(e->mask.dst_mac);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	e->val.dst_mac[5] ^= 1;
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	e->mask.dst_mac[5] = 0xfe;	/* the differing bit is masked out */
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	/* value bits outside the mask do not matter */
	memset(e->val.src_mac, 0x5a, ETH_ALEN);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	memcpy(e->val.src_mac, smac, ETH_ALEN);
	memset(e->mask.src_mac, 0xff, ETH_ALEN);
	e->val.ether_type = htons(ETH_P_IP);
	e->mask.ether_type = htons(0xffff);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	e->val.ether_type = htons(ETH_P_IPV6);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));

	/* the ether type behind a tag; a tag rule needs a tagged frame */
	e->val.ether_type = htons(ETH_P_IP);
	eth(&f, ETH_P_IP, 100);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	udp(&f, 1, 2);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	e->val.vlan_tag = htons(100);
	e->mask.vlan_tag = htons(0x0fff);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	e->val.vlan_tag = htons(101);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	e->val.vlan_tag = 0;
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
}

static void shca_flow_test_match_l3l4(struct kunit *test)
{
	struct ib_flow_spec_tcp_udp *l4;
	struct ib_flow_spec_ipv4 *v4;
	struct ib_flow_spec_ipv6 *v6;
	struct specs s = {};
	struct frame f;

	v4 = add_v4(&s);
	v4->val.src_ip = htonl(0x0a000001);
	v4->mask.src_ip = htonl(0xffffffff);
	v4->val.dst_ip = htonl(0x0a000000);
	v4->mask.dst_ip = htonl(0xffffff00);
	v4->val.proto = IPPROTO_UDP;
	v4->mask.proto = 0xff;
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 2, 0);
	udp(&f, 1000, 2000);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	v4->val.dst_ip = htonl(0x0b000000);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	v4->val.dst_ip = htonl(0x0a000000);

	/* an IPv4 rule never matches IPv6 or non-IP, even with 0 masks */
	memset(&v4->mask, 0, sizeof(v4->mask));
	eth(&f, ETH_P_IPV6, -1);
	ipv6(&f, IPPROTO_UDP);
	udp(&f, 1000, 2000);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	eth(&f, 0x88b5, -1);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));

	/* L4 ports, and TCP is not UDP */
	l4 = add_l4(&s, IB_FLOW_SPEC_UDP);
	l4->val.dst_port = htons(2000);
	l4->mask.dst_port = htons(0xffff);
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	udp(&f, 1000, 2000);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	l4->val.src_port = htons(999);
	l4->mask.src_port = htons(0xffff);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	l4->val.src_port = htons(1000);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_TCP, 0, 0);
	tcp(&f, 1000, 2000);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	/* a frame cut short in its UDP header matches no UDP rule */
	eth(&f, ETH_P_IP, -1);
	ipv4(&f, IPPROTO_UDP, 0, 0);
	udp(&f, 1000, 2000);
	f.len -= 5;
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));

	/* IPv6 + TCP */
	memset(&s, 0, sizeof(s));
	v6 = add_v6(&s);
	v6->val.dst_ip[15] = 2;
	memset(v6->mask.dst_ip, 0xff, 16);
	v6->val.flow_label = htonl(0xa1234);
	v6->mask.flow_label = htonl(0xfffff);
	v6->val.next_hdr = IPPROTO_TCP;
	v6->mask.next_hdr = 0xff;
	l4 = add_l4(&s, IB_FLOW_SPEC_TCP);
	l4->val.dst_port = htons(80);
	l4->mask.dst_port = htons(0xffff);
	eth(&f, ETH_P_IPV6, -1);
	ipv6(&f, IPPROTO_TCP);
	tcp(&f, 5555, 80);
	KUNIT_EXPECT_TRUE(test, frame_matches(&f, &s));
	v6->val.flow_label = htonl(0xa1235);
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
	v6->val.flow_label = htonl(0xa1234);
	v6->val.dst_ip[15] = 3;
	KUNIT_EXPECT_FALSE(test, frame_matches(&f, &s));
}

static void shca_flow_test_priority(struct kunit *test)
{
	/* lower value first; equal values: the older rule */
	KUNIT_EXPECT_TRUE(test, shca_flow_better(0, 5, 1, 0));
	KUNIT_EXPECT_FALSE(test, shca_flow_better(2, 0, 1, 9));
	KUNIT_EXPECT_TRUE(test, shca_flow_better(3, 1, 3, 2));
	KUNIT_EXPECT_FALSE(test, shca_flow_better(3, 2, 3, 1));
	KUNIT_EXPECT_FALSE(test, shca_flow_better(3, 2, 3, 2));
}

static struct kunit_case shca_flow_cases[] = {
	KUNIT_CASE(shca_flow_test_parse),
	KUNIT_CASE(shca_flow_test_compile),
	KUNIT_CASE(shca_flow_test_match_l2),
	KUNIT_CASE(shca_flow_test_match_l3l4),
	KUNIT_CASE(shca_flow_test_priority),
	{}
};

static struct kunit_suite shca_flow_suite = {
	.name = "shca_flow",
	.test_cases = shca_flow_cases,
};

kunit_test_suite(shca_flow_suite);
