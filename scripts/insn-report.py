#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reports what scripts/insn-profile.sh counted: per driver, the guest
instructions per message that the long run executed beyond the short one,
by where they ran and by kernel function.

    insn-report.py DIR MESSAGES [TOP]
"""
import bisect
import collections
import sys

KERNEL = 0xFFFF800000000000
MODULES = {"rroce": "[rroce]", "rxe": "[rdma_rxe]"}


def symbols(path):
    """Sorted (address, name, module) of the text symbols in a kallsyms file."""
    syms = []
    for line in open(path):
        p = line.split()
        if len(p) >= 3 and p[1] in "tT":
            syms.append((int(p[0], 16), p[2], p[3] if len(p) > 3 else ""))
    syms.sort()
    return syms


def counts(path):
    c = collections.Counter()
    for line in open(path):
        a, n = line.split()[:2]
        c[int(a, 16)] += int(n)
    return c


def by_function(dump, syms):
    addrs = [s[0] for s in syms]
    out = collections.Counter()
    for a, n in dump.items():
        if a < KERNEL:
            out[("user space", "")] += n
            continue
        i = bisect.bisect_right(addrs, a) - 1
        out[(syms[i][1], syms[i][2]) if i >= 0 else ("?", "")] += n
    return out


def main():
    out, messages = sys.argv[1], int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    dumps = {}
    for line in open(f"{out}/dumps"):
        drv, phase, n = line.split()
        dumps[(drv, phase)] = f"{out}/count.{n}"
    for drv, module in MODULES.items():
        syms = symbols(f"{out}/kallsyms.{drv}")
        short = by_function(counts(dumps[(drv, "short")]), syms)
        long = by_function(counts(dumps[(drv, "long")]), syms)
        diff = {k: (long[k] - short[k]) / messages for k in set(long) | set(short)}
        groups = collections.Counter()
        for (name, mod), v in diff.items():
            where = "user space" if name == "user space" else "driver" if mod == module else "rest of the kernel"
            groups[where] += v
        total = sum(groups.values())
        print(f"\n{drv}: instructions per message, {total:.0f} in all")
        for where in ("driver", "rest of the kernel", "user space"):
            print(f"  {groups[where]:8.0f}  {where}")
        modules = collections.Counter()
        for (name, mod), v in diff.items():
            if name != "user space":
                modules[mod or "the kernel image"] += v
        print(f"{drv}: kernel instructions per message by module")
        for mod, v in modules.most_common(8):
            print(f"  {v:8.0f}  {mod}")
        print(f"{drv}: costliest kernel functions, instructions per message")
        ranked = sorted(((v, k) for k, v in diff.items() if k[0] != "user space"), reverse=True)
        for v, (name, mod) in ranked[:top]:
            print(f"  {v:8.1f}  {name} {mod}")


if __name__ == "__main__":
    main()
