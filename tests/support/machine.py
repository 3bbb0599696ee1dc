"""How crowded the test machine is right now, for the checks whose "nothing found" half is
judged only on a machine not crowded already (tests/rusage/rusage_check.py,
tests/openmp/imbalance_check.py)."""
import time


def machine_wait_share():
    """Run-queue wait of this process while it spins 300 ms (schedstat: run, wait, slices)."""
    def wait():
        with open("/proc/self/schedstat") as f:
            return int(f.read().split()[1])
    w0, t0 = wait(), time.monotonic()
    while time.monotonic() - t0 < 0.3:
        pass
    return (wait() - w0) / 1e9 / (time.monotonic() - t0)
