/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the host unit tests (test_unit.c, test_tm.c) share: the provider's
 * header and CHECK(), which counts failures and carries on.
 */
#ifndef SHCA_TEST_UNIT_H
#define SHCA_TEST_UNIT_H

#include <stdio.h>

#include "shca.h"

extern int failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,          \
				__LINE__, #cond);                              \
			failures++;                                            \
		}                                                              \
	} while (0)

/* test_tm.c: tag-matching SRQs */
void test_tm(void);

/* test_wq.c: work queues and RSS QPs */
void test_wq(void);

#endif /* SHCA_TEST_UNIT_H */
