#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Reports what scripts/insn-profile.sh counted: per driver, the guest
instructions per message that the long run executed beyond the short one,
by where they ran and by kernel function. With --lines KO (the rroce.ko
that ran, built with debug information), also rroce's costliest source
lines: each translation block counted at the line it starts in, inlined
code at the line it was inlined from. --in FUNCTION (a part of a symbol's
name) narrows that to one function and reads each line's chain of
inlined calls from the function down, DEPTH frames of it (default 3):
where the function's instructions go.

    insn-report.py DIR MESSAGES [TOP] [--lines KO [--in FUNCTION [DEPTH]]]
"""
import bisect
import collections
import subprocess
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


def module_offsets(ko):
    """The .text offset of each function symbol of the module file KO."""
    nm = subprocess.run(["nm", "--defined-only", ko], capture_output=True, text=True, check=True)
    offsets = {}
    for line in nm.stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tT":
            offsets[p[2]] = int(p[0], 16)
    return offsets


def by_line(diff_addrs, syms, module, ko, top, within=None, depth=3):
    """Prints the costliest source lines of MODULE's functions, or of those
    whose name contains WITHIN: DIFF_ADDRS maps a translation block's
    address to its instructions per message."""
    addrs = [s[0] for s in syms]
    offsets = module_offsets(ko)
    where = {}
    for a in diff_addrs:
        i = bisect.bisect_right(addrs, a) - 1
        if i < 0 or syms[i][2] != module or syms[i][1] not in offsets:
            continue
        if within and within not in syms[i][1]:
            continue
        where[a] = offsets[syms[i][1]] + a - syms[i][0]
    if not where:
        return
    order = sorted(where)
    run = subprocess.run(
        ["addr2line", "-a", "-i", "-e", ko, "-j", ".text"],
        input="\n".join(f"{where[a]:x}" for a in order),
        capture_output=True, text=True, check=True,
    )
    # Each address, then its inlined frames innermost first.
    frames, current = {}, None
    for line in run.stdout.splitlines():
        if line.startswith("0x"):
            current = int(line, 16)
            frames[current] = []
        elif current is not None:
            frames[current].append(line.split(" (discriminator")[0].rsplit("/", 1)[-1])
    lines = collections.Counter()
    for a in order:
        chain = frames.get(where[a]) or ["?"]
        if within:
            lines[" > ".join(reversed(chain[-depth:]))] += diff_addrs[a]
        else:
            lines[" < ".join(chain[:depth])] += diff_addrs[a]
    if within:
        total = sum(diff_addrs[a] for a in order)
        print(f"lines of {within}, {total:.0f} instructions per message, calls inward")
    else:
        print(f"costliest lines of {module}, innermost first, instructions per message")
    for key, v in lines.most_common(top):
        print(f"  {v:8.1f}  {key}")


def main():
    args = sys.argv[1:]
    ko, within, depth = None, None, 3
    if "--lines" in args:
        i = args.index("--lines")
        ko = args[i + 1]
        del args[i : i + 2]
    if "--in" in args:
        i = args.index("--in")
        within = args[i + 1]
        n = 2 if i + 2 < len(args) and args[i + 2].isdigit() else 1
        depth = int(args[i + 2]) if n == 2 else depth
        del args[i : i + 1 + n]
    out, messages = args[0], int(args[1])
    top = int(args[2]) if len(args) > 2 else 40
    dumps = {}
    for line in open(f"{out}/dumps"):
        drv, phase, n = line.split()
        dumps[(drv, phase)] = f"{out}/count.{n}"
    for drv, module in MODULES.items():
        syms = symbols(f"{out}/kallsyms.{drv}")
        short_a = counts(dumps[(drv, "short")])
        long_a = counts(dumps[(drv, "long")])
        short = by_function(short_a, syms)
        long = by_function(long_a, syms)
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
        if ko and drv == "rroce":
            per_addr = {a: (long_a[a] - short_a[a]) / messages for a in set(long_a) | set(short_a)}
            by_line(per_addr, syms, module, ko, top, within, depth)


if __name__ == "__main__":
    main()
