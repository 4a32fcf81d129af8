#!/usr/bin/env python3
"""Where a command's CPU goes: runs it, samples /proc, and prints the CPU
seconds of its process tree by kind of process (Ray's node processes, Ray
actors by class, Go's compiler and linker, test binaries, ...), then by
test binary: each package's tests with every process they started (its Ray
clusters, their workers, its kube-apiserver).

    scripts/cpu-profile.py [--interval S] [--top N] -- make test

It is how raytpu decides what to cut from `make test`, which is CPU-bound
on 2 cores: wall time follows CPU seconds, so the table says where time
goes. A process is counted if its parent was seen in the tree; one that
starts and exits between two samples is missed, so the total is a lower
bound (at the default 1 s interval, short Python helpers of a second or
two are mostly seen). The table goes to stderr; the command's own output
is untouched and its exit status is this script's.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")

# Order matters: the first pattern found in a command line names its kind.
KINDS = [
    (re.compile(r"ray::(\S+)"), lambda m: "ray::" + m.group(1)),
    (re.compile(r"/([\w.-]+\.test)\b"), lambda m: "test binary " + m.group(1)),
    (re.compile(r"/pkg/tool/[^/]+/(compile|link|vet|asm|cgo)\b"), lambda m: "go " + m.group(1)),
]
NAMED = [
    ("gcs_server", "ray gcs_server"),
    ("/raylet/raylet", "ray raylet"),
    ("dashboard/agent.py", "ray dashboard agent (starting)"),
    ("dashboard/dashboard.py", "ray dashboard head"),
    ("ray-dashboard-", "ray dashboard head modules"),
    ("runtime_env/agent", "ray runtime_env agent (starting)"),
    ("log_monitor.py", "ray log_monitor"),
    ("autoscaler/_private/monitor.py", "ray monitor"),
    ("default_worker.py", "ray worker (starting)"),
    ("bin/ray start", "ray start (CLI)"),
    ("_raytpu_launcher", "raytpu launcher (job driver)"),
    ("kube-apiserver", "kube-apiserver"),
    ("etcd", "etcd"),
    ("tpu-plugin", "raytpu tpu-plugin emulator"),
    ("go test", "go test"),
    ("go vet", "go vet"),
]


def kind(cmd):
    for pat, name in KINDS:
        m = pat.search(cmd)
        if m:
            return name(m)
    for needle, name in NAMED:
        if needle in cmd:
            return name
    return cmd[:60] or "(unnamed)"


TEST_BINARY = re.compile(r"/([\w.-]+)\.test\b")


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command name: [0] is the
    state, [1] the parent pid, [11] and [12] user and system ticks, [19]
    the start time."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2 :].split()


class Tree:
    """The CPU ticks and latest command line of every process seen in the
    tree of one root pid, keyed by (pid, start time)."""

    def __init__(self, root):
        # Members are keyed by (pid, start time), not pid: pids wrap (at
        # 32768 by default) within a long suite, and a reused pid is
        # someone else's process. live maps the pids of the members seen
        # in the latest scan to their start times; a process joins when
        # its parent is live and started no later than it.
        start = int(stat_fields(root)[19])
        self.members = {(root, start)}
        self.live = {root: start}
        self.procs = {}
        # The test binary a process descends from (its package), decided
        # when the process is first seen: Ray's daemons outlive the
        # `ray start` that spawned them, but not before the sampler saw them.
        self.owner = {}
        self.parent_owner = {}
        # When each package's test binary was first and last seen running,
        # and for how many samples n test binaries ran at once.
        self.first, self.last = {}, {}
        self.running = collections.Counter()

    def sample(self, now):
        binaries = set()
        live = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            try:
                fields = stat_fields(pid)
                ppid, ticks, start = int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19])
                key = (pid, start)
                if key not in self.members:
                    parent = live.get(ppid, self.live.get(ppid))
                    if parent is None or parent > start:
                        continue
                    self.members.add(key)
                live[pid] = start
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except (OSError, ValueError, IndexError):
                continue  # exited between listdir and read
            if not cmd and key in self.procs:
                cmd = self.procs[key][1]
            # A test binary is the program itself, not a command that names
            # one (the linker writing it, tmux running it in a pane).
            m = TEST_BINARY.search(cmd.split(" ", 1)[0])
            if key not in self.owner:
                self.owner[key] = m.group(1) if m else self.parent_owner.get(ppid, "")
            self.parent_owner[pid] = self.owner[key]
            if m and fields[0] != "Z":
                binaries.add(m.group(1))
            # A Ray worker renames itself after exec: the latest name wins.
            self.procs[key] = (ticks, cmd)
        self.live = live
        for b in binaries:
            self.first.setdefault(b, now)
            self.last[b] = now
        self.running[len(binaries)] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between samples (default 1)")
    ap.add_argument("--top", type=int, default=40, help="rows to print (default 40)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command: give it after --")

    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    tree = Tree(proc.pid)
    while proc.poll() is None:
        tree.sample(time.monotonic() - start)
        time.sleep(args.interval)
    tree.sample(time.monotonic() - start)
    wall = time.monotonic() - start

    cpu, count = collections.Counter(), collections.Counter()
    for ticks, line in tree.procs.values():
        k = kind(line)
        cpu[k] += ticks
        count[k] += 1
    total = sum(cpu.values()) / HZ
    out = sys.stderr
    print(f"\ncpu-profile: {' '.join(cmd)}: exit {proc.returncode}, wall {wall:.0f} s, "
          f"CPU {total:.0f} s in {len(tree.procs)} processes ({total / wall:.2f} cores on average)", file=out)
    print(f"{'CPU s':>8} {'share':>6} {'procs':>6}  kind", file=out)
    for k, ticks in cpu.most_common(args.top):
        s = ticks / HZ
        print(f"{s:8.1f} {100 * s / total if total else 0:5.1f}% {count[k]:6d}  {k}", file=out)
    by_pkg = collections.Counter()
    for key, (ticks, _) in tree.procs.items():
        by_pkg[tree.owner.get(key) or "(no test binary: go build, vet, setup)"] += ticks
    print(f"\n{'CPU s':>8} {'share':>6} {'from s':>7} {'to s':>6}  test binary (the package's tests and every process they started)", file=out)
    for k, ticks in by_pkg.most_common(args.top):
        s = ticks / HZ
        span = f"{tree.first[k]:7.0f} {tree.last[k]:6.0f}" if k in tree.first else f"{'':7} {'':6}"
        print(f"{s:8.1f} {100 * s / total if total else 0:5.1f}% {span}  {k}", file=out)
    samples = sum(tree.running.values())
    if samples:
        print("\ntest binaries running at once, share of the samples: " + ", ".join(
            f"{n}: {100 * c / samples:.0f}%" for n, c in sorted(tree.running.items())), file=out)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
