// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the CAP_NET_RAW check that raw packet QPs, RSS QPs and flow
 * rules share (raw.c's shca_net_raw_check()), with and without the
 * capability.  On 6.1 and 6.12 ib_core refuses such users before the
 * driver is reached, so this is where the driver's own check is proven.
 */
#include <kunit/test.h>
#include <linux/cred.h>
#include <net/net_namespace.h>

#include "raw.h"

/*
 * The check that raw packet QPs, RSS QPs and flow rules share: a task
 * without CAP_NET_RAW is refused over init_net, one with it is not.
 * (The KUnit thread runs with every capability.)
 */
static void shca_caps_test_net_raw(struct kunit *test)
{
	const struct cred *old;
	struct cred *new;

	KUNIT_EXPECT_EQ(test, shca_net_raw_check(&init_net), 0);
	new = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, new);
	cap_lower(new->cap_effective, CAP_NET_RAW);
	old = override_creds(new);
	KUNIT_EXPECT_EQ(test, shca_net_raw_check(&init_net), -EPERM);
	revert_creds(old);
	put_cred(new);
	KUNIT_EXPECT_EQ(test, shca_net_raw_check(&init_net), 0);
}

static struct kunit_case shca_caps_test_cases[] = {
	KUNIT_CASE(shca_caps_test_net_raw),
	{}
};

static struct kunit_suite shca_caps_test_suite = {
	.name = "shca_caps",
	.test_cases = shca_caps_test_cases,
};

kunit_test_suites(&shca_caps_test_suite);
