// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: RSS and work queue rules (rss_logic.h) - the Toeplitz hash
 * against Microsoft's published RSS verification vectors, hash input
 * extraction from Ethernet frames (VLAN tags, IPv4 options, IPv6,
 * fragments, non-IP, truncated frames), the hash configuration check and
 * every WQ state transition.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "rss_logic.h"

/* The key of Microsoft's "Verifying the RSS Hash Calculation". */
static const u8 ms_key[SHCA_RX_HASH_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct v4_vec {
	u8 src[4], dst[4];
	u16 sport, dport;
	u32 ip, ip_tcp;
};

static const struct v4_vec v4_vecs[] = {
	{ { 66, 9, 149, 187 }, { 161, 142, 100, 80 }, 2794, 1766,
	  0x323e8fc2, 0x51ccc178 },
	{ { 199, 92, 111, 2 }, { 65, 69, 140, 83 }, 14230, 4739,
	  0xd718262a, 0xc626b0ea },
	{ { 24, 19, 198, 95 }, { 12, 22, 207, 184 }, 12898, 38024,
	  0xd2d0a5de, 0x5c2b394a },
	{ { 38, 27, 205, 30 }, { 209, 142, 163, 6 }, 48228, 2217,
	  0x82989176, 0xafc7327f },
	{ { 153, 39, 163, 191 }, { 202, 188, 127, 2 }, 44251, 1303,
	  0x5d1809c5, 0x10e828a2 },
};

struct v6_vec {
	u8 src[16], dst[16];
	u16 sport, dport;
	u32 ip, ip_tcp;
};

static const struct v6_vec v6_vecs[] = {
	{ /* 3ffe:2501:200:1fff::7 -> 3ffe:2501:200:3::1 */
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff,
	    0, 0, 0, 0, 0, 0, 0, 0x07 },
	  { 0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03,
	    0, 0, 0, 0, 0, 0, 0, 0x01 },
	  2794, 1766, 0x2cc18cd5, 0x40207d3d },
	{ /* 3ffe:501:8::260:97ff:fe40:efab -> ff02::1 */
	  { 0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0x00, 0x00,
	    0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab },
	  { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01 },
	  14230, 4739, 0x0f0c461c, 0xdde51bbf },
	{ /* 3ffe:1900:4545:3:200:f8ff:fe21:67cf -> fe80::200:f8ff:fe21:67cf */
	  { 0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03,
	    0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
	  { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
	    0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf },
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

#define V4_ALL	(SHCA_RX_HASH_V4 | SHCA_RX_HASH_TCP)
#define V6_ALL	(SHCA_RX_HASH_V6 | SHCA_RX_HASH_TCP)

static void put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void rss_test_toeplitz_v4(struct kunit *test)
{
	u8 in[12];
	u32 i;

	for (i = 0; i < ARRAY_SIZE(v4_vecs); i++) {
		const struct v4_vec *v = &v4_vecs[i];

		memcpy(in, v->src, 4);
		memcpy(in + 4, v->dst, 4);
		put16(in + 8, v->sport);
		put16(in + 10, v->dport);
		KUNIT_EXPECT_EQ(test, shca_toeplitz(ms_key, in, 8), v->ip);
		KUNIT_EXPECT_EQ(test, shca_toeplitz(ms_key, in, 12), v->ip_tcp);
	}
}

static void rss_test_toeplitz_v6(struct kunit *test)
{
	u8 in[36];
	u32 i;

	for (i = 0; i < ARRAY_SIZE(v6_vecs); i++) {
		const struct v6_vec *v = &v6_vecs[i];

		memcpy(in, v->src, 16);
		memcpy(in + 16, v->dst, 16);
		put16(in + 32, v->sport);
		put16(in + 34, v->dport);
		KUNIT_EXPECT_EQ(test, shca_toeplitz(ms_key, in, 32), v->ip);
		KUNIT_EXPECT_EQ(test, shca_toeplitz(ms_key, in, 36), v->ip_tcp);
	}
}

/*
 * Ethernet (+ @vlans 802.1Q tags) + IPv4 with @opt_words option words +
 * a TCP/UDP header.  Return: the frame length.
 */
static u32 build_v4(u8 *f, const struct v4_vec *v, u32 vlans, u32 opt_words,
		    u8 proto, u16 frag)
{
	u32 off = 12, ihl = 20 + 4 * opt_words, i;
	u8 *ip;

	memset(f, 0, 128);
	for (i = 0; i < vlans; i++, off += 4) {
		put16(f + off, 0x8100);
		put16(f + off + 2, 100 + i);
	}
	put16(f + off, 0x0800);
	ip = f + off + 2;
	ip[0] = 0x40 | (ihl / 4);
	put16(ip + 2, ihl + 20);
	put16(ip + 6, frag);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, v->src, 4);
	memcpy(ip + 16, v->dst, 4);
	memset(ip + 20, 0x01, ihl - 20);	/* NOP options */
	put16(ip + ihl, v->sport);
	put16(ip + ihl + 2, v->dport);
	return off + 2 + ihl + 20;
}

static u32 build_v6(u8 *f, const struct v6_vec *v, u8 nexthdr)
{
	u8 *ip = f + 14;

	memset(f, 0, 128);
	put16(f + 12, 0x86dd);
	ip[0] = 0x60;
	put16(ip + 4, 20);
	ip[6] = nexthdr;
	ip[7] = 64;
	memcpy(ip + 8, v->src, 16);
	memcpy(ip + 24, v->dst, 16);
	put16(ip + 40, v->sport);
	put16(ip + 42, v->dport);
	return 14 + 40 + 20;
}

static u32 hash(const u8 *f, u32 len, u64 fields)
{
	return shca_rss_hash(ms_key, f, len, fields);
}

static void rss_test_frame_v4(struct kunit *test)
{
	u8 f[128];
	u32 i, len;

	for (i = 0; i < ARRAY_SIZE(v4_vecs); i++) {
		const struct v4_vec *v = &v4_vecs[i];

		len = build_v4(f, v, 0, 0, 6, 0);
		KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
		KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_V4), v->ip);
		/* UDP ports are not selected: the TCP frame hashes its IPs */
		KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_V4 |
					   SHCA_RX_HASH_UDP), v->ip);
		len = build_v4(f, v, 0, 0, 17, 0);
		KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_V4 |
					   SHCA_RX_HASH_UDP), v->ip_tcp);
		KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip);
	}
}

static void rss_test_frame_vlan_options(struct kunit *test)
{
	const struct v4_vec *v = &v4_vecs[0];
	u8 f[128];
	u32 len;

	len = build_v4(f, v, 1, 0, 6, 0);
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
	len = build_v4(f, v, 2, 0, 6, 0);		/* QinQ */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
	len = build_v4(f, v, 0, 3, 6, 0);		/* 12 bytes of options */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
	len = build_v4(f, v, 1, 10, 6, 0);		/* ihl 15 behind a tag */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
}

static void rss_test_frame_fields(struct kunit *test)
{
	const struct v4_vec *v = &v4_vecs[1];
	u8 f[128], in[12];
	u32 len = build_v4(f, v, 0, 0, 6, 0);

	/* only the selected fields, in src, dst, sport, dport order */
	memcpy(in, v->dst, 4);
	put16(in + 4, v->dport);
	KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_DST_IPV4 |
				   SHCA_RX_HASH_DST_PORT_TCP),
			shca_toeplitz(ms_key, in, 6));
	memcpy(in, v->src, 4);
	KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_SRC_IPV4),
			shca_toeplitz(ms_key, in, 4));
	put16(in, v->sport);
	KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_SRC_PORT_TCP),
			shca_toeplitz(ms_key, in, 2));
	KUNIT_EXPECT_EQ(test, hash(f, len, 0), 0U);
}

static void rss_test_frame_v6(struct kunit *test)
{
	u8 f[128];
	u32 i, len;

	for (i = 0; i < ARRAY_SIZE(v6_vecs); i++) {
		const struct v6_vec *v = &v6_vecs[i];

		len = build_v6(f, v, 6);
		KUNIT_EXPECT_EQ(test, hash(f, len, V6_ALL), v->ip_tcp);
		KUNIT_EXPECT_EQ(test, hash(f, len, SHCA_RX_HASH_V6), v->ip);
		/* IPv4 fields select IPv4 frames only */
		KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), 0U);
		/* an extension header first: no ports (hop-by-hop) */
		len = build_v6(f, v, 0);
		KUNIT_EXPECT_EQ(test, hash(f, len, V6_ALL), v->ip);
	}
}

static void rss_test_frame_fragment(struct kunit *test)
{
	const struct v4_vec *v = &v4_vecs[2];
	u8 f[128];
	u32 len;

	len = build_v4(f, v, 0, 0, 6, 0x2000);	/* MF */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip);
	len = build_v4(f, v, 0, 0, 6, 0x0010);	/* offset 128 */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip);
	len = build_v4(f, v, 0, 0, 6, 0x4000);	/* DF only: whole */
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), v->ip_tcp);
}

static void rss_test_frame_bad(struct kunit *test)
{
	const struct v4_vec *v = &v4_vecs[3];
	u8 f[128];
	u32 len = build_v4(f, v, 0, 0, 6, 0);

	/* ARP: no field */
	put16(f + 12, 0x0806);
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), 0U);
	/* too short for the IPv4 header */
	len = build_v4(f, v, 0, 0, 6, 0);
	KUNIT_EXPECT_EQ(test, hash(f, 14 + 19, V4_ALL), 0U);
	KUNIT_EXPECT_EQ(test, hash(f, 13, V4_ALL), 0U);
	KUNIT_EXPECT_EQ(test, hash(f, 0, V4_ALL), 0U);
	/* IP header but the ports cut off: addresses only */
	KUNIT_EXPECT_EQ(test, hash(f, 14 + 20 + 3, V4_ALL), v->ip);
	/* ihl below 5, and options past the end */
	f[14] = 0x44;
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), 0U);
	f[14] = 0x4f;
	KUNIT_EXPECT_EQ(test, hash(f, 14 + 40, V4_ALL), 0U);
	/* version 6 in an IPv4 ethertype */
	f[14] = 0x65;
	KUNIT_EXPECT_EQ(test, hash(f, len, V4_ALL), 0U);
	/* three VLAN tags are more than we look through */
	len = build_v4(f, v, 2, 0, 6, 0);
	memmove(f + 20, f + 16, len - 16);
	put16(f + 16, 0x8100);
	KUNIT_EXPECT_EQ(test, hash(f, len + 4, V4_ALL), 0U);
}

static void rss_test_check_conf(struct kunit *test)
{
	const u8 t = SHCA_RX_HASH_FUNC_TOEPLITZ, k = SHCA_RX_HASH_KEY_LEN;

	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, V4_ALL, 3), 0);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, V6_ALL, 8), 0);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, SHCA_RX_HASH_V4 |
						  SHCA_RX_HASH_UDP, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, 0, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(0, k, V4_ALL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(2, k, V4_ALL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, 39, V4_ALL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, 52, V4_ALL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, SHCA_RX_HASH_V4 |
						  SHCA_RX_HASH_V6, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, SHCA_RX_HASH_TCP |
						  SHCA_RX_HASH_UDP, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, 1ULL << 9, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, 1ULL << 40, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, SHCA_RX_HASH_V4 |
						  SHCA_RX_HASH_IPSEC_SPI, 1),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, shca_rss_check_conf(t, k, SHCA_RX_HASH_V4 |
						  SHCA_RX_HASH_INNER, 1),
			-EOPNOTSUPP);
}

static void rss_test_wq_transitions(struct kunit *test)
{
	static const bool ok[3][3] = {
		/* to:         RESET  RDY    ERR */
		[IB_WQS_RESET] = { true, true, true },
		[IB_WQS_RDY] = { true, true, true },
		[IB_WQS_ERR] = { true, false, true },
	};
	int cur, next;

	for (cur = IB_WQS_RESET; cur <= IB_WQS_ERR; cur++)
		for (next = IB_WQS_RESET; next <= IB_WQS_ERR; next++)
			KUNIT_EXPECT_EQ_MSG(test, shca_wq_transition_ok(cur, next),
					    ok[cur][next], "%d -> %d", cur, next);
	KUNIT_EXPECT_FALSE(test, shca_wq_transition_ok(IB_WQS_ERR + 1,
						       IB_WQS_RESET));
	KUNIT_EXPECT_FALSE(test, shca_wq_transition_ok(IB_WQS_RDY,
						       IB_WQS_ERR + 1));
}

/* Only an 802.1Q tag right after the MACs, followed by a type, is taken. */
static void rss_test_wq_cvlan(struct kunit *test)
{
	u8 f[18] = { [12] = 0x81, [13] = 0x00, [14] = 0xa0, [15] = 0x7b,
		     [16] = 0x08, [17] = 0x00 };
	u16 tci = 0;

	KUNIT_EXPECT_TRUE(test, shca_wq_cvlan_tci(f, sizeof(f), &tci));
	KUNIT_EXPECT_EQ(test, tci, 0xa07b);
	/* tag cut short, or no EtherType after it */
	KUNIT_EXPECT_FALSE(test, shca_wq_cvlan_tci(f, 17, &tci));
	KUNIT_EXPECT_FALSE(test, shca_wq_cvlan_tci(f, 14, &tci));
	/* an S-tag (802.1ad) is not a C-VLAN */
	f[12] = 0x88;
	f[13] = 0xa8;
	KUNIT_EXPECT_FALSE(test, shca_wq_cvlan_tci(f, sizeof(f), &tci));
	/* untagged IPv4 */
	f[12] = 0x08;
	f[13] = 0x00;
	KUNIT_EXPECT_FALSE(test, shca_wq_cvlan_tci(f, sizeof(f), &tci));
}

static struct kunit_case shca_rss_test_cases[] = {
	KUNIT_CASE(rss_test_toeplitz_v4),
	KUNIT_CASE(rss_test_toeplitz_v6),
	KUNIT_CASE(rss_test_frame_v4),
	KUNIT_CASE(rss_test_frame_vlan_options),
	KUNIT_CASE(rss_test_frame_fields),
	KUNIT_CASE(rss_test_frame_v6),
	KUNIT_CASE(rss_test_frame_fragment),
	KUNIT_CASE(rss_test_frame_bad),
	KUNIT_CASE(rss_test_check_conf),
	KUNIT_CASE(rss_test_wq_transitions),
	KUNIT_CASE(rss_test_wq_cvlan),
	{}
};

static struct kunit_suite shca_rss_test_suite = {
	.name = "shca_rss",
	.test_cases = shca_rss_test_cases,
};

kunit_test_suites(&shca_rss_test_suite);
