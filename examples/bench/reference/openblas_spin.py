#!/usr/bin/env python3
"""Measure how much CPU the torch process burns while it sleeps right after
a call: OpenBLAS's worker threads busy-wait for a while after each BLAS call
before they sleep (OPENBLAS_THREAD_TIMEOUT), and a process timed in that
window shares its cores with them. compare.py's --settle exists because of
this.

    /usr/bin/python3 examples/bench/reference/openblas_spin.py
    OPENBLAS_THREAD_TIMEOUT=4 /usr/bin/python3 examples/bench/reference/openblas_spin.py

It runs the §5.3 MLP's forward pass (833×50 → 200 → 200 → 100, float32,
torch threads 2, OMP_WAIT_POLICY=passive as compare.py sets) and prints the
process's CPU time (all threads, from /proc/self/task/*/schedstat) in each
25 ms window of the 150 ms after the call, averaged over 20 calls.
"""
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
try:
    import torch
except ImportError as e:
    print(f"openblas_spin.py: {e}")
    sys.exit(0)


def cpu_ns():
    total = 0
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def main():
    torch.set_num_threads(2)
    net = torch.nn.Sequential(torch.nn.Linear(50, 200), torch.nn.ReLU(), torch.nn.Linear(200, 200), torch.nn.ReLU(),
                              torch.nn.Linear(200, 100))
    x = torch.randn(833, 50)
    windows, calls, width = 6, 20, 0.025
    acc = [0] * windows
    with torch.no_grad():
        for _ in range(5):
            net(x)
        for _ in range(calls):
            net(x)
            for w in range(windows):
                c0 = cpu_ns()
                time.sleep(width)
                acc[w] += cpu_ns() - c0
    print(f"OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT', '(default)')}, "
          f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; load {open('/proc/loadavg').read().split()[0]}")
    print("CPU ms of the sleeping process per 25 ms window after a forward pass:",
          " ".join(f"{a / calls / 1e6:.1f}" for a in acc))


if __name__ == "__main__":
    main()
