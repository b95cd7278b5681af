#!/usr/bin/env python3
"""rtt-trace.py DIR: decompose the traced ping-pongs of scripts/rtt-trace.sh.

DIR/a/COL-MODE.dat and DIR/b/COL-MODE.dat are the two sides' traces of one
ibv_rc_pingpong -s 2 run (a: client, b: server; one vCPU each).  Each
side's time is cut into windows, one per round trip: from one of its
SENDs leaving the NIC (rtt/tx, dev_hard_start_xmit) to its next one.  In a
window the side receives the peer's ACK of its SEND and the peer's SEND
(rtt/rx, napi_gro_receive); its turnaround T runs from that SEND's
arrival to its own next SEND leaving, and is cut at:

  t_rx    the peer's SEND at napi_gro_receive (t_irq: the interrupt
          before it, so irq->napi is the NIC interrupt to the stack)
  t_cqe   the last completion written before the posting system call
          (rtt/cqe; with the ACK after the SEND, the send completion)
  t_app   the ping-pong runs in user space for good: the start of its
          last stretch in user space before that system call
  t_sys   the system call that sends (sys_enter), if a system call sends
  t_tx    its next SEND at dev_hard_start_xmit

  (a) t_rx -> t_app   receive path to the task running with what it needs
      (a1) t_rx -> t_cqe   the driver's receive path up to the completion
      (a2) t_cqe -> t_app  completion to the task (wakeup, switch, return)
  (b) t_app -> t_tx   the task's work and the send path
      (b1) t_app -> t_sys  user space (poll, post_recv, post_send)
      (b2) t_sys -> t_tx   the system call up to the NIC (no syscall: "-")

Every instant of the CPU is also given to one of: hardirq, softirq:VEC,
work:FUNC (a work item executing), kworker (a worker outside its items:
wakeup, switch, pool bookkeeping), pp-user, pp-sys:NAME (the ping-pong in
a system call), idle, other tasks; the sums over T are shown per
category.  Counts per round trip (whole windows): context switches,
wakeups, work items by function, system calls, interrupts, softirqs,
packets each way by opcode.  "T step by step" lists the commonest order
of events in T (NIC receive, softirq end, work queued, wakeups, switches,
work items, completions, xmit start and return, the ping-pong's system
calls) with their median times.  The wire is the round trip minus both
sides' turnarounds (windows paired by PSN): QEMU's link between the VMs,
the sender's virtio notification and the receiver's interrupt up to
napi_gro_receive.  Medians in microseconds; the first and last 10 round
trips are left out.
"""
import bisect
import collections
import os
import re
import statistics
import subprocess
import sys

SKIP = 10
OPS = {0x04: "SEND", 0x05: "SEND_IMM", 0x11: "ACK", 0x00: "SEND_FIRST",
       0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM"}
SEND_OPS = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05}
SYSCALLS = {0: "read", 1: "write", 3: "close", 7: "poll", 9: "mmap", 11: "munmap",
            13: "rt_sigaction", 14: "rt_sigprocmask", 16: "ioctl", 24: "sched_yield",
            35: "nanosleep", 202: "futex", 228: "clock_gettime", 230: "clock_nanosleep",
            232: "epoll_wait", 281: "epoll_pwait", 39: "getpid", 186: "gettid", 60: "exit",
            231: "exit_group", 20: "writev", 19: "readv", 44: "sendto", 45: "recvfrom"}
SOFTIRQ = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
           "SCHED", "HRTIMER", "RCU"]
PP = "ibv_rc_pingpong"
# the system calls that wait for a completion event rather than post
WAITS = {"read", "poll", "epoll_wait", "epoll_pwait"}

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+):\s+([\w:]+):\s*(.*)$")
KV = re.compile(r"(\w+)=(\S*)")


def num(v):
    try:
        return int(v, 0)
    except ValueError:
        return None


def funcs_of(dat):
    """The function addresses a .dat file recorded (trace-cmd report -f)."""
    out = subprocess.run(["trace-cmd", "report", "-f", "-i", dat], capture_output=True,
                         text=True).stdout
    m = {}
    for ln in out.splitlines():
        p = ln.split()
        if len(p) >= 2 and re.fullmatch(r"[0-9a-fA-F]{8,16}", p[0]):
            m[int(p[0], 16)] = p[1]
    return m


class Ev:
    __slots__ = ("t", "comm", "pid", "name", "f", "raw")

    def __init__(self, t, comm, pid, name, f, raw):
        self.t, self.comm, self.pid, self.name, self.f, self.raw = t, comm, pid, name, f, raw


def load(dat):
    fmap = funcs_of(dat)
    out = subprocess.run(["trace-cmd", "report", "-R", "-t", "-i", dat],
                         capture_output=True, text=True).stdout
    evs = []
    for ln in out.splitlines():
        m = LINE.match(ln)
        if not m:
            continue
        comm, pid, _cpu, ts, name, rest = m.groups()
        name = name.split(":")[-1]
        f = dict(KV.findall(rest))
        evs.append(Ev(round(float(ts) * 1e6, 3), comm, int(pid), name, f, rest))
    evs.sort(key=lambda e: e.t)
    return evs, fmap


def fname(fmap, v):
    if v is None:
        return "?"
    if not v.startswith("0x") and not re.fullmatch(r"[0-9a-fA-F]{8,16}", v):
        return v
    a = int(v, 16)
    return fmap.get(a, v)


def short(comm):
    """A task's name without its instance number (kworker/u5:1 -> kworker)."""
    return "kworker" if comm.startswith("kworker") else re.sub(r"[/:]?\d+$", "", comm)


def psn_of(word):
    """The PSN of a BTH's third word as read little-endian."""
    b = word.to_bytes(4, "little")
    return (b[1] << 16) | (b[2] << 8) | b[3]


class Side:
    """One side's trace: the CPU's states as segments, and the milestones."""

    def __init__(self, dat):
        self.evs, self.fmap = load(dat)
        self.segs_t = []	# segment starts
        self.segs = []		# (start, end, category)
        self.rx = []		# (t, op, psn)
        self.tx = []
        self.cqe = []
        self.irqs = []		# (t, name)
        self.sys_enter = []	# (t, nr)
        self.sys_exit = []
        self.marks = collections.defaultdict(list)	# counter name -> times
        self.tl = []		# (t, label): the steps the timeline shows
        self.xdone = []		# net_dev_xmit: the NIC driver's xmit returned
        self.irq_len = []	# durations of the NIC's receive interrupt
        self.pp_pids = set(e.pid for e in self.evs if e.comm == PP)
        self.walk()

    def walk(self):
        task = None		# (pid, comm)
        stack = []		# interrupt contexts: category strings
        insys = {}		# pid -> syscall name
        work = {}		# pid -> work function
        last_t = None
        cur = None

        def category():
            if stack:
                return stack[-1]
            if task is None:
                return "unknown"
            pid, comm = task
            if pid == 0:
                return "idle"
            if pid in self.pp_pids or comm == PP:
                s = insys.get(pid)
                return "pp-sys:" + s if s else "pp-user"
            if comm.startswith("kworker"):
                w = work.get(pid)
                return "work:" + w if w else "kworker"
            if comm.startswith("ksoftirqd"):
                return "ksoftirqd"
            return "task:" + re.sub(r"[/:]?\d+$", "", comm)

        for e in self.evs:
            if last_t is not None and cur is not None and e.t > last_t:
                if self.segs and self.segs[-1][2] == cur and self.segs[-1][1] == last_t:
                    s = self.segs[-1]
                    self.segs[-1] = (s[0], e.t, cur)
                else:
                    self.segs.append((last_t, e.t, cur))
            if task is None and e.name != "sched_switch":
                task = (e.pid, e.comm)
            n, f = e.name, e.f
            if n == "sched_switch":
                task = (num(f.get("next_pid", "0")) or 0, f.get("next_comm", "?"))
                stack = []
                self.marks["switch"].append(e.t)
                self.tl.append((e.t, "switch->" + short(task[1])))
            elif n == "irq_handler_entry":
                stack.append("hardirq")
                self.irqs.append((e.t, f.get("name", "?")))
                self.tl.append((e.t, "irq " + f.get("name", "?")))
                self.marks["irq:" + f.get("name", "?")].append(e.t)
            elif n == "irq_handler_exit":
                if stack and stack[-1] == "hardirq":
                    stack.pop()
                    if self.irqs and "input" in self.irqs[-1][1]:
                        self.irq_len.append(e.t - self.irqs[-1][0])
            elif n == "softirq_entry":
                v = num(f.get("vec", "-1"))
                name = SOFTIRQ[v] if v is not None and 0 <= v < len(SOFTIRQ) else str(v)
                stack.append("softirq:" + name)
                self.marks["softirq:" + name].append(e.t)
            elif n == "softirq_exit":
                if stack and stack[-1] == "softirq:NET_RX":
                    self.tl.append((e.t, "NET_RX end"))
                if stack and stack[-1].startswith("softirq"):
                    stack.pop()
            elif n == "sys_enter":
                nr = num(f.get("id", "-1"))
                nm = SYSCALLS.get(nr, str(nr))
                insys[e.pid] = nm
                self.sys_enter.append((e.t, nm, e.pid))
                self.marks["syscall:" + nm].append(e.t)
                if e.pid in self.pp_pids:
                    self.tl.append((e.t, "pp enter " + nm))
            elif n == "sys_exit":
                if e.pid in self.pp_pids:
                    self.tl.append((e.t, "pp exit " + insys.get(e.pid, "?")))
                insys.pop(e.pid, None)
                self.sys_exit.append((e.t, e.pid))
            elif n == "workqueue_execute_start":
                fn = fname(self.fmap, f.get("function"))
                work[e.pid] = fn
                self.marks["work:" + fn].append(e.t)
                self.tl.append((e.t, "start " + fn))
            elif n == "workqueue_execute_end":
                self.tl.append((e.t, "end " + work.get(e.pid, "?")))
                work.pop(e.pid, None)
            elif n == "workqueue_queue_work":
                fn = fname(self.fmap, f.get("function"))
                self.marks["queue:" + fn].append(e.t)
                self.tl.append((e.t, "queue " + fn))
            elif n in ("sched_wakeup",):
                self.marks["wakeup:" + re.sub(r"[/:]?\d+$", "", f.get("comm", "?"))].append(e.t)
                self.tl.append((e.t, "wakeup " + short(f.get("comm", "?"))))
            elif n == "hrtimer_expire_entry":
                self.marks["hrtimer:" + fname(self.fmap, f.get("function"))].append(e.t)
            elif n == "rx" and "op" in f:
                self.rx.append((e.t, num(f["op"]), psn_of(num(f["psn"]))))
                self.marks["rx:" + OPS.get(num(f["op"]), hex(num(f["op"])))].append(e.t)
                self.tl.append((e.t, "napi rx " + OPS.get(num(f["op"]), "?")))
            elif n == "tx" and "op" in f:
                self.tx.append((e.t, num(f["op"]), psn_of(num(f["psn"]))))
                self.marks["tx:" + OPS.get(num(f["op"]), hex(num(f["op"])))].append(e.t)
                self.tl.append((e.t, "xmit " + OPS.get(num(f["op"]), "?")))
            elif n == "net_dev_xmit":
                self.tl.append((e.t, "xmit done"))
                self.xdone.append(e.t)
            elif n == "cqe":
                self.cqe.append(e.t)
                self.marks["cqe"].append(e.t)
                self.tl.append((e.t, "cqe"))
            last_t = e.t
            cur = category()
        self.segs_t = [s[0] for s in self.segs]
        self.tl.sort()
        self.tl_t = [x[0] for x in self.tl]

    def cats(self, t0, t1):
        """Time per category in [t0, t1)."""
        out = collections.Counter()
        i = max(bisect.bisect_right(self.segs_t, t0) - 1, 0)
        while i < len(self.segs) and self.segs[i][0] < t1:
            s, e, c = self.segs[i]
            a, b = max(s, t0), min(e, t1)
            if b > a:
                out[c] += b - a
            i += 1
        return out

    def cat_at(self, t):
        i = bisect.bisect_right(self.segs_t, t) - 1
        if 0 <= i < len(self.segs) and self.segs[i][0] <= t <= self.segs[i][1]:
            return self.segs[i][2]
        return "?"

    def user_start_before(self, t, lo):
        """The start of the ping-pong's last stretch in user space before t
        (after lo), or None."""
        i = bisect.bisect_right(self.segs_t, t) - 1
        while i >= 0 and self.segs[i][1] > lo:
            s, e, c = self.segs[i]
            if c == "pp-user" and s < t:
                return max(s, lo)
            i -= 1
        return None

    def windows(self):
        """One record per window between two of this side's SENDs."""
        sends = [x for x in self.tx if x[1] in SEND_OPS]
        ws = []
        for k in range(len(sends) - 1):
            t0, _, p0 = sends[k]
            t1, _, p1 = sends[k + 1]
            rxs = [x for x in self.rx if t0 < x[0] < t1]
            req = next((x for x in rxs if x[1] in SEND_OPS), None)
            ack = next((x for x in rxs if x[1] == 0x11 and x[2] == p0), None)
            w = {"t0": t0, "t1": t1, "p0": p0, "p1": p1, "rt": t1 - t0,
                 "rx_psn": req[2] if req else None}
            if req:
                trx = req[0]
                w["T"] = t1 - trx
                w["ack_last"] = bool(ack and ack[0] > trx)
                w["ack_gap"] = (ack[0] - trx) if ack else None
                irq = [x for x in self.irqs if trx - 2000 < x[0] <= trx]
                w["irq2napi"] = trx - irq[-1][0] if irq else None
                # the posting system call: the one the SEND left in, or the
                # ping-pong's last one since the SEND came
                sy = [x for x in self.sys_enter if trx < x[0] <= t1 and x[2] in self.pp_pids]
                w["via"] = self.cat_at(t1 - 0.0005)
                if not w["via"].startswith("pp-sys"):
                    sy = [x for x in sy if x[1] not in WAITS]
                tsys = sy[-1][0] if sy else None
                w["sys"] = sy[-1][1] if sy else None
                w["tsys"] = tsys
                tend = tsys if tsys is not None else t1
                cq = [c for c in self.cqe if trx <= c <= tend]
                tcqe = cq[-1] if cq else None
                tapp = self.user_start_before(tend, trx)
                w["a"] = (tapp - trx) if tapp is not None else None
                w["a1"] = (tcqe - trx) if tcqe is not None else None
                w["a2"] = (tapp - tcqe) if (tapp is not None and tcqe is not None) else None
                w["b"] = (t1 - tapp) if tapp is not None else None
                w["b1"] = (tsys - tapp) if (tsys is not None and tapp is not None) else None
                w["b2"] = (t1 - tsys) if tsys is not None else None
                w["cats_T"] = self.cats(trx, t1)
                i0 = bisect.bisect_left(self.tl_t, trx)
                i1 = bisect.bisect_right(self.tl_t, t1)
                w["tl"] = [(lb, t - trx) for t, lb in self.tl[i0:i1]
                           if not lb.startswith("irq") or "input" in lb]
                w["syscalls_T"] = len(sy)
            w["cats_rt"] = self.cats(t0, t1)
            w["counts"] = {k2: bisect.bisect_left(v, t1) - bisect.bisect_left(v, t0)
                           for k2, v in self.marks.items()}
            ws.append(w)
        return ws[SKIP:len(ws) - SKIP] if len(ws) > 3 * SKIP else ws


def stats_read(path):
    """The counters of `rdma statistic show link DEV/1` in a file."""
    try:
        words = open(path).read().split()
    except OSError:
        return {}
    out = {}
    for k, v in zip(words, words[1:]):
        if re.fullmatch(r"[a-z][a-z0-9_]*", k) and re.fullmatch(r"\d+", v):
            out[k] = int(v)
    return out


def stats_delta(base):
    """The counters that moved between BASE-before.stats and -after."""
    a, b = stats_read(base + "-before.stats"), stats_read(base + "-after.stats")
    return {k: b[k] - a.get(k, 0) for k in b if b[k] != a.get(k, 0)}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, w=9):
    if v is None:
        return "-".rjust(w)
    if isinstance(v, float):
        return ("%.1f" % v).rjust(w)
    return str(v).rjust(w)


def timeline(side, ws):
    """The most common sequence of steps in T, with median times."""
    seqs = collections.Counter(tuple(lb for lb, _ in w["tl"]) for w in ws if "tl" in w)
    if not seqs:
        return
    seq, n = seqs.most_common(1)[0]
    sel = [w["tl"] for w in ws if "tl" in w and tuple(lb for lb, _ in w["tl"]) == seq]
    print(f"  side {side}: T step by step, the commonest sequence ({n} of {len(ws)} round trips;"
          f" usec from t_rx, median; +step):")
    prev = 0.0
    for k, lb in enumerate(seq):
        m = statistics.median(x[k][1] for x in sel)
        print(f"    {m:8.1f} {m - prev:+8.1f}  {lb}")
        prev = m


def report(d, col, mode):
    fa, fb = os.path.join(d, "a", f"{col}-{mode}.dat"), os.path.join(d, "b", f"{col}-{mode}.dat")
    if not (os.path.exists(fa) and os.path.exists(fb)):
        return None
    sides = {"a": Side(fa), "b": Side(fb)}
    ws = {s: sides[s].windows() for s in sides}
    print(f"\n=== {col}, {mode} (a: client, b: server) ===")
    for s in "ab":
        print(f"  side {s}: {len(ws[s])} round trips analysed, "
              f"{len(sides[s].evs)} events, {len(sides[s].rx)} RoCE rx, {len(sides[s].tx)} RoCE tx")
    # wire: a's window (own SEND p) paired with b's window that received p
    bidx = {w["rx_psn"]: w for w in ws["b"] if w.get("rx_psn") is not None}
    wire, rts = [], []
    for w in ws["a"]:
        wb = bidx.get(w["p0"])
        rts.append(w["rt"])
        if wb and w.get("T") is not None and wb.get("T") is not None:
            wire.append(w["rt"] - w["T"] - wb["T"])
    rows = [("round trip (window)", "rt"), ("turnaround T = t_rx -> t_tx", "T"),
            ("(a) t_rx -> t_app", "a"), ("  (a1) t_rx -> t_cqe", "a1"),
            ("  (a2) t_cqe -> t_app", "a2"), ("(b) t_app -> t_tx", "b"),
            ("  (b1) t_app -> t_sys (user)", "b1"), ("  (b2) t_sys -> t_tx", "b2"),
            ("ACK after the SEND: gap ACK-SEND", "ack_gap"),
            ("irq entry -> napi (before T)", "irq2napi")]
    print(f"  {'median usec':38s} {'a':>9s} {'b':>9s}")
    for label, k in rows:
        print(f"  {label:38s} {fmt(med(w.get(k) for w in ws['a']))} {fmt(med(w.get(k) for w in ws['b']))}")
    for s in "ab":
        n = len(ws[s]) or 1
        al = sum(1 for w in ws[s] if w.get("ack_last"))
        via = collections.Counter(w.get("via") for w in ws[s])
        sysn = collections.Counter(w.get("sys") for w in ws[s])
        print(f"  side {s}: ACK arrived after the peer's SEND in {al}/{n}; "
              f"SEND left from {dict(via.most_common(3))}; posting syscall {dict(sysn.most_common(3))}")
    print(f"  wire (RT_a - T_a - T_b, {len(wire)} paired) median {fmt(med(wire)).strip()} usec; "
          f"RT median {fmt(med(rts)).strip()}")
    # categories over T and over the whole round trip
    for key, label in (("cats_T", "CPU time in T by category (median per round trip, usec)"),
                       ("cats_rt", "CPU time in the whole round trip by category (mean, usec)")):
        cats = collections.OrderedDict()
        for s in "ab":
            for w in ws[s]:
                for c in w.get(key, {}):
                    cats[c] = 1
        print(f"  {label}:")
        for c in sorted(cats, key=lambda c: -sum(w.get(key, {}).get(c, 0) for w in ws["a"] + ws["b"])):
            vals = []
            for s in "ab":
                xs = [w.get(key, {}).get(c, 0.0) for w in ws[s] if key in w]
                vals.append((med(xs) if key == "cats_T" else (sum(xs) / len(xs) if xs else None)))
            if all((v or 0) < 0.5 for v in vals):
                continue
            print(f"    {c:36s} {fmt(vals[0])} {fmt(vals[1])}")
    keys = collections.OrderedDict()
    for s in "ab":
        for w in ws[s]:
            for c in w["counts"]:
                keys[c] = 1
    print("  counts per round trip (mean over windows):")
    for c in sorted(keys):
        vals = []
        for s in "ab":
            xs = [w["counts"].get(c, 0) for w in ws[s]]
            vals.append(sum(xs) / len(xs) if xs else 0)
        if all(v < 0.05 for v in vals):
            continue
        print(f"    {c:44s} {vals[0]:9.2f} {vals[1]:9.2f}")
    for s in "ab":
        sd = sides[s]
        if sd.irq_len:
            print(f"  side {s}: the guest's speed: the NIC's receive interrupt handler takes "
                  f"{statistics.median(sd.irq_len):.1f} usec (median of {len(sd.irq_len)}; "
                  f"the same work in every run)")
        for nm, ops in (("SEND", SEND_OPS), ("ACK", {0x11})):
            xs = []
            for t, op, _ in sd.tx:
                k = bisect.bisect_left(sd.xdone, t)
                if op in ops and k < len(sd.xdone) and sd.xdone[k] - t < 5000:
                    xs.append(sd.xdone[k] - t)
            if xs:
                print(f"  side {s}: the NIC driver's xmit of a {nm} (dev_hard_start_xmit -> "
                      f"net_dev_xmit): median {statistics.median(xs):.1f} usec ({len(xs)})")
    for s in "ab":
        timeline(s, ws[s])
    for s in "ab":
        delta = stats_delta(os.path.join(d, s, f"{col}-{mode}"))
        if delta:
            print(f"  side {s}: device counters through the traced run: "
                  + " ".join(f"{k} +{v}" for k, v in delta.items()))
    return {"rt": med(rts), "wire": med(wire),
            "T": {s: med(w.get("T") for w in ws[s]) for s in "ab"}}


def main():
    d = sys.argv[1]
    print(__doc__.split("\n\n")[0])
    summ = {}
    cols = sorted({f.rsplit("-", 1)[0] for f in os.listdir(os.path.join(d, "a"))
                   if f.endswith((".dat",)) and f.rsplit("-", 1)[-1] in ("poll.dat", "event.dat")},
                  key=lambda c: (re.sub(r"\d+$", "", c) != "shca", len(c), c))
    for col in cols:
        for mode in ("poll", "event"):
            r = report(d, col, mode)
            if r:
                summ[(col, mode)] = r
    print("\n=== summary (median usec) ===")
    print(f"  {'':16s} {'RT':>9s} {'T_a':>9s} {'T_b':>9s} {'wire':>9s}")
    for (col, mode), r in summ.items():
        print(f"  {col + ' ' + mode:16s} {fmt(r['rt'])} {fmt(r['T']['a'])} {fmt(r['T']['b'])} {fmt(r['wire'])}")


if __name__ == "__main__":
    main()
