/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's linkage macros, as far as crc32_copy_x86_64.S needs them. */
#define SYM_FUNC_START(name) .globl name; .type name, @function; name:
#define SYM_FUNC_END(name) .size name, . - name
#define RET ret
