// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest instructions executed from each
 * translation block's start address, exactly: no sampling, so no skid and
 * no aliasing with a periodic workload. Each time the guest executes the
 * instruction at the address given as trigger=ADDR (a kernel function the
 * guest calls on purpose, such as ksys_sync, under nokaslr), the counts so
 * far are written to PREFIX.N (N = 1, 2, ...) as "address instructions
 * block-length" lines, and start again from zero.
 *
 *   qemu-system-x86_64 ... -plugin file=insn_count.so,trigger=0x...,out=PREFIX
 *
 * Written against the plugin API of QEMU 7.2 (version 1), declared here
 * rather than taken from QEMU's sources, which Debian does not ship. The
 * counters are not atomic: run the guest with one vCPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
		void (*cb)(unsigned int vcpu, void *udata),
		enum qemu_plugin_cb_flags flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One translation of a block: a block translated again gets another. */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	size_t len;
};

static struct block **blocks;
static size_t nblocks, capacity;
static uint64_t trigger;
static const char *prefix = "insn_count";
static int dumps;

static void dump(unsigned int vcpu, void *udata)
{
	char name[4096];
	FILE *f;
	size_t i;

	snprintf(name, sizeof(name), "%s.%d", prefix, ++dumps);
	f = fopen(name, "w");
	for (i = 0; i < nblocks; i++) {
		if (f && blocks[i]->insns)
			fprintf(f, "%llx %llu %zu\n", (unsigned long long)blocks[i]->vaddr,
				(unsigned long long)blocks[i]->insns, blocks[i]->len);
		blocks[i]->insns = 0;
	}
	if (f)
		fclose(f);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return;
	if (nblocks == capacity) {
		size_t n = capacity ? 2 * capacity : 65536;
		struct block **p = realloc(blocks, n * sizeof(*p));

		if (!p) {
			free(b);
			return;
		}
		blocks = p;
		capacity = n;
	}
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->len = qemu_plugin_tb_n_insns(tb);
	blocks[nblocks++] = b;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->insns, b->len);
	if (b->vaddr == trigger)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "trigger=", 8))
			trigger = strtoull(argv[i] + 8, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			prefix = strdup(argv[i] + 4);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
