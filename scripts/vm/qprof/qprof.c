// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qprof: a QEMU TCG plugin that profiles a guest by counting, per
 * translated block, its executions, its guest instructions and its
 * memory accesses (inline counters: no callbacks on the hot path).
 *
 * Under TCG, perf's cpu-clock samples land in the idle loop; this
 * counts what the vCPUs executed instead.  A snapshot of every block's
 * counters is written to OUT.N each time the file TRIG appears (the
 * plugin deletes it); two snapshots around a workload, diffed by
 * qprof-report against the guest's /proc/kallsyms, give each function's
 * share.  Guest memory accesses are the dear part under TCG (a soft-MMU
 * lookup each), so the report weighs them.
 *
 * Built for QEMU 7.2's plugin API (version 1); only the calls used are
 * declared, as Debian ships no qemu-plugin.h.  See README.md.
 *
 *   gcc -O2 -shared -fPIC -o qprof.so qprof.c -lpthread
 *   qemu-system-x86_64 -plugin ./qprof.so,trig=/x/qprof.trig,out=/x/snap ...
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info;

#define QPROF_EXPORT __attribute__((visibility("default")))
#define QPROF_INLINE_ADD_U64	0	/* enum qemu_plugin_op */
#define QPROF_MEM_RW		3	/* enum qemu_plugin_mem_rw */

QPROF_EXPORT int qemu_plugin_version = 1;

typedef void (*qprof_tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qprof_tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn,
					  int rw, int op, void *ptr,
					  uint64_t imm);

/* One translation of a block; a block translated again gets another. */
struct qprof_block {
	uint64_t pc;
	uint64_t execs;		/* bumped inline by every vCPU (racy: a profile) */
	uint64_t mem;		/* memory accesses, bumped inline */
	uint32_t insns;
};

static struct qprof_block **blocks;
static size_t nblocks, capblocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static char trig[512], out[512];
static int snaps;

static void qprof_dump(void)
{
	char name[600];
	FILE *f;
	size_t i;

	snprintf(name, sizeof(name), "%s.%d", out, snaps++);
	f = fopen(name, "w");
	if (!f)
		return;
	pthread_mutex_lock(&blocks_lock);
	for (i = 0; i < nblocks; i++)
		if (blocks[i]->execs)
			fprintf(f, "%llx %llu %u %llu\n",
				(unsigned long long)blocks[i]->pc,
				(unsigned long long)blocks[i]->execs,
				blocks[i]->insns,
				(unsigned long long)blocks[i]->mem);
	pthread_mutex_unlock(&blocks_lock);
	fclose(f);
}

static void *qprof_watch(void *arg)
{
	(void)arg;
	for (;;) {
		usleep(200000);
		if (access(trig, F_OK) == 0) {
			qprof_dump();
			unlink(trig);
		}
	}
	return NULL;
}

static void qprof_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct qprof_block *b = calloc(1, sizeof(*b));
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	if (!b)
		return;
	b->pc = qemu_plugin_tb_vaddr(tb);
	b->insns = n;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QPROF_INLINE_ADD_U64,
						 &b->execs, 1);
	for (i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_inline(qemu_plugin_tb_get_insn(tb, i),
						     QPROF_MEM_RW,
						     QPROF_INLINE_ADD_U64,
						     &b->mem, 1);
	pthread_mutex_lock(&blocks_lock);
	if (nblocks == capblocks) {
		size_t cap = capblocks ? capblocks * 2 : 65536;
		struct qprof_block **nb = realloc(blocks, cap * sizeof(*nb));

		if (!nb) {
			pthread_mutex_unlock(&blocks_lock);
			return;	/* leaks b; its block just goes uncounted */
		}
		blocks = nb;
		capblocks = cap;
	}
	blocks[nblocks++] = b;
	pthread_mutex_unlock(&blocks_lock);
}

QPROF_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				     const struct qemu_info *info,
				     int argc, char **argv)
{
	pthread_t t;
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "trig=", 5))
			snprintf(trig, sizeof(trig), "%s", argv[i] + 5);
		else if (!strncmp(argv[i], "out=", 4))
			snprintf(out, sizeof(out), "%s", argv[i] + 4);
	}
	if (!trig[0] || !out[0]) {
		fprintf(stderr, "qprof: trig=FILE and out=PREFIX are required\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, qprof_trans);
	return pthread_create(&t, NULL, qprof_watch, NULL) ? -1 : 0;
}
