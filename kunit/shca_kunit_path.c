// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: which packets a connected QP takes (path_logic.h): from the
 * address of its path's remote GID to that of its local GID, in IPv4
 * packets for IPv4-mapped GIDs and in IPv6 packets otherwise.
 */
#include <kunit/test.h>
#include <linux/in6.h>
#include <linux/kernel.h>

#include "path_logic.h"

/* 10.97.0.1 <-> 10.97.0.2 and fd97::1 <-> fd97::2 */
static const u8 shca_path_t4a[4] = { 10, 97, 0, 1 };
static const u8 shca_path_t4b[4] = { 10, 97, 0, 2 };
static const u8 shca_path_t6a[16] = { 0xfd, 0x97, [15] = 1 };
static const u8 shca_path_t6b[16] = { 0xfd, 0x97, [15] = 2 };

static void shca_path_t_gid4(union ib_gid *gid, const u8 *addr)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

static void shca_path_t_gid6(union ib_gid *gid, const u8 *addr)
{
	memcpy(gid->raw, addr, 16);
}

/* IPv4: the peer's packets pass, anything else with one address off not */
static void shca_path_test_v4(struct kunit *test)
{
	static const u8 other[4] = { 10, 97, 0, 9 };
	union ib_gid remote, local;
	struct shca_path_addrs p;

	shca_path_t_gid4(&remote, shca_path_t4b);
	shca_path_t_gid4(&local, shca_path_t4a);
	shca_path_addrs_set(&p, &remote, &local);
	KUNIT_EXPECT_EQ(test, p.family, SHCA_PATH_V4);
	KUNIT_EXPECT_TRUE(test, shca_path_addrs_match(&p, true, shca_path_t4b,
						      shca_path_t4a));
	/* a foreign source, a foreign destination, both swapped */
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, other,
						       shca_path_t4a));
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, shca_path_t4b,
						       other));
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, shca_path_t4a,
						       shca_path_t4b));
	/* the same addresses IPv4-mapped in an IPv6 packet */
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false, remote.raw,
						       local.raw));
}

/* IPv6: all 16 bytes count; an IPv4 packet never matches */
static void shca_path_test_v6(struct kunit *test)
{
	union ib_gid remote, local;
	struct shca_path_addrs p;
	u8 near[16];
	int i;

	shca_path_t_gid6(&remote, shca_path_t6b);
	shca_path_t_gid6(&local, shca_path_t6a);
	shca_path_addrs_set(&p, &remote, &local);
	KUNIT_EXPECT_EQ(test, p.family, SHCA_PATH_V6);
	KUNIT_EXPECT_TRUE(test, shca_path_addrs_match(&p, false, shca_path_t6b,
						      shca_path_t6a));
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false, shca_path_t6a,
						       shca_path_t6b));
	/* one bit off anywhere, in the source or the destination */
	for (i = 0; i < 16; i++) {
		memcpy(near, shca_path_t6b, 16);
		near[i] ^= 0x80;
		KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false, near,
							       shca_path_t6a));
		memcpy(near, shca_path_t6a, 16);
		near[i] ^= 1;
		KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false,
							       shca_path_t6b,
							       near));
	}
	/* an IPv4 packet whose addresses are the GIDs' first bytes */
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, shca_path_t6b,
						       shca_path_t6a));
}

/* Before RTR anything passes (the state decides); a mixed path nothing */
static void shca_path_test_none_mixed(struct kunit *test)
{
	struct shca_path_addrs p = {};
	union ib_gid g4, g6;

	KUNIT_EXPECT_EQ(test, p.family, SHCA_PATH_NONE);
	KUNIT_EXPECT_TRUE(test, shca_path_addrs_match(&p, true, shca_path_t4b,
						      shca_path_t4a));
	KUNIT_EXPECT_TRUE(test, shca_path_addrs_match(&p, false, shca_path_t6b,
						      shca_path_t6a));
	shca_path_t_gid4(&g4, shca_path_t4b);
	shca_path_t_gid6(&g6, shca_path_t6a);
	shca_path_addrs_set(&p, &g4, &g6);
	KUNIT_EXPECT_EQ(test, p.family, SHCA_PATH_MIXED);
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, shca_path_t4b,
						       &g6.raw[12]));
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false, g4.raw,
						       shca_path_t6a));
	shca_path_addrs_set(&p, &g6, &g4);
	KUNIT_EXPECT_EQ(test, p.family, SHCA_PATH_MIXED);
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, false, shca_path_t6a,
						       g4.raw));
}

/* A QP talking to itself or its own device: source and destination equal */
static void shca_path_test_loopback(struct kunit *test)
{
	struct shca_path_addrs p;
	union ib_gid g;

	shca_path_t_gid4(&g, shca_path_t4a);
	shca_path_addrs_set(&p, &g, &g);
	KUNIT_EXPECT_TRUE(test, shca_path_addrs_match(&p, true, shca_path_t4a,
						      shca_path_t4a));
	KUNIT_EXPECT_FALSE(test, shca_path_addrs_match(&p, true, shca_path_t4b,
						       shca_path_t4a));
}

static struct kunit_case shca_path_test_cases[] = {
	KUNIT_CASE(shca_path_test_v4),
	KUNIT_CASE(shca_path_test_v6),
	KUNIT_CASE(shca_path_test_none_mixed),
	KUNIT_CASE(shca_path_test_loopback),
	{}
};

static struct kunit_suite shca_path_test_suite = {
	.name = "shca_path",
	.test_cases = shca_path_test_cases,
};

kunit_test_suites(&shca_path_test_suite);
