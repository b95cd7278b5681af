// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the tracepoints of shca_trace.h, instantiated here and nowhere
 * else, so that each file that traces depends on this leaf alone.
 */
#define CREATE_TRACE_POINTS
#include "shca_trace.h"
