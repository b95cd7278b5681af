#!/usr/bin/python3
"""Per-QP counters through ib_core's counter binding (`rdma statistic qp`).

With auto mode on (`rdma statistic qp set link DEV/1 auto type on`) the RC
QPs of rdma-core's own test resources are bound to a counter as they go
to INIT; their SENDs must be counted there, the port must still show
every one of them (its default counters plus the bound ones), and once
the QPs are gone the counter goes and the port keeps its counts.  A
manual bind and unbind moves a QP's counting to a counter of its own and
back.  Prints TAP-like lines.

    counter_cases.py --dev shca0
"""
import json
import subprocess
import sys

import caselib

MSGS = ('tx_direct_msgs', 'tx_wire_msgs')
ITERS = 10


def rdma(*args):
    """Run the rdma tool; its stdout (check=True: a failure raises)."""
    return subprocess.run(['rdma', *args], capture_output=True, text=True,
                          check=True).stdout


def msgs(values):
    """The messages a set of counters says its QPs sent."""
    return sum(int(values.get(k, 0)) for k in MSGS)


def qp_counters(dev):
    """The QP counters of DEV's port 1: a list of (cntn, lqpns, values)."""
    out = rdma('-j', 'statistic', 'qp', 'show', 'link', f'{dev}/1')
    rows = []
    for c in json.loads(out or '[]'):
        lqpns = set()
        for item in c.get('lqpn', []):
            lqpns.add(int(item['lqpn'] if isinstance(item, dict) else item))
        values = {k: v for k, v in c.items() if isinstance(v, int)}
        rows.append((c.get('cntn'), lqpns, values))
    return rows


def define_tests():
    from tests.base import RDMATestCase, RCResources
    import tests.utils as u

    class QpCounterTest(RDMATestCase):
        def setUp(self):
            super().setUp()
            self.dev = self.dev_name
            self.auto = False

        def tearDown(self):
            if self.auto:
                rdma('statistic', 'qp', 'set', 'link', f'{self.dev}/1',
                     'auto', 'off')
            super().tearDown()

        def pair(self):
            self.client = RCResources(**self.dev_info)
            self.server = RCResources(**self.dev_info)
            self.client.pre_run(self.server.psns, self.server.qps_num)
            self.server.pre_run(self.client.psns, self.client.qps_num)
            return {self.client.qps_num[0], self.server.qps_num[0]}

        def close_pair(self):
            for res in (self.client, self.server):
                for qp in res.qps:
                    qp.close()

        def holding(self, qpns):
            """The counters that hold any of qpns."""
            return [c for c in qp_counters(self.dev) if c[1] & qpns]

        def test_auto_type_counts_per_qp(self):
            """Auto mode by type: both RC QPs in one counter, which counts
            every SEND they make; the port counts them once, and keeps
            them when the QPs and their counter are gone."""
            rdma('statistic', 'qp', 'set', 'link', f'{self.dev}/1',
                 'auto', 'type', 'on')
            self.auto = True
            before = msgs(caselib.counters(self.dev))
            qpns = self.pair()
            u.traffic(self.client, self.server, ITERS, self.gid_index,
                      self.ib_port)
            held = self.holding(qpns)
            self.assertEqual(len(held), 1, f'counters holding {qpns}: {held}')
            cntn, lqpns, values = held[0]
            self.assertEqual(lqpns & qpns, qpns)
            self.assertEqual(msgs(values), 2 * ITERS,
                             f'counter {cntn}: {values}')
            self.assertEqual(msgs(caselib.counters(self.dev)) - before,
                             2 * ITERS, 'the port, counters included')
            self.close_pair()
            self.assertEqual(self.holding(qpns), [])
            self.assertEqual(msgs(caselib.counters(self.dev)) - before,
                             2 * ITERS, 'the port, after the counter went')

        def test_manual_bind_and_unbind(self):
            """A QP bound by hand counts in its own counter from then on;
            unbound, the port's default counters take it back."""
            qpns = self.pair()
            qpn = self.client.qps_num[0]
            before = msgs(caselib.counters(self.dev))
            u.traffic(self.client, self.server, ITERS, self.gid_index,
                      self.ib_port)
            self.assertEqual(self.holding(qpns), [])
            rdma('statistic', 'qp', 'bind', 'link', f'{self.dev}/1',
                 'lqpn', str(qpn))
            u.traffic(self.client, self.server, ITERS, self.gid_index,
                      self.ib_port)
            held = self.holding(qpns)
            self.assertEqual(len(held), 1, f'counters holding {qpns}: {held}')
            cntn, lqpns, values = held[0]
            self.assertEqual(lqpns, {qpn})
            self.assertEqual(msgs(values), ITERS, f'counter {cntn}: {values}')
            rdma('statistic', 'qp', 'unbind', 'link', f'{self.dev}/1',
                 'cntn', str(cntn), 'lqpn', str(qpn))
            self.assertEqual(self.holding(qpns), [])
            u.traffic(self.client, self.server, ITERS, self.gid_index,
                      self.ib_port)
            self.assertEqual(msgs(caselib.counters(self.dev)) - before,
                             6 * ITERS, 'the port, before, bound and after')
            self.close_pair()

    return caselib.named(QpCounterTest, 'counter_cases')


if __name__ == '__main__':
    sys.exit(caselib.run_cases(define_tests, 'counter', lean=True))
