"""threads= is bounded and reuses its pools; errors use Python's argument names."""

import time

import numpy as np
import pytest

import lowp

# Large enough that every thread of a pool gets a share (32Ki elements per thread at least).
X = np.linspace(-3, 3, 1 << 16, dtype=np.float32)


def os_threads():
    """The process's thread count, as Linux counts it."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads: line in /proc/self/status")


@pytest.mark.parametrize("threads", [0, -1, -(2**70), lowp.MAX_THREADS + 1, 2**40, 2**70])
def test_bad_thread_counts_raise_before_starting_threads(threads):
    before = os_threads()
    for call in [lambda: lowp.cast(X, "f16", threads=threads),
                 lambda: lowp.fit_report(X, "f16", threads=threads)]:
        with pytest.raises(ValueError, match="threads"):
            call()
    assert os_threads() <= before


def test_the_bound_is_named():
    with pytest.raises(ValueError, match=f"threads must be at most {lowp.MAX_THREADS}"):
        lowp.cast(X, "f16", threads=2**40)
    assert lowp.MAX_THREADS >= 16
    # The bound itself is allowed.
    assert lowp.cast(X, "f16", threads=lowp.MAX_THREADS).shape == X.shape


def test_many_thread_counts_do_not_accumulate_threads():
    want = lowp.cast(X, "bf16", threads=1)
    before = os_threads()
    top = min(40, lowp.MAX_THREADS)
    for _ in range(2):
        for n in range(2, top + 1):
            assert np.array_equal(lowp.cast(X, "bf16", threads=n), want)
    # Two kept pools (the last two sizes) at most, plus rayon's global pool; the threads of
    # evicted pools exit shortly after, so wait for them a little.
    bound = before + 2 * top + 64
    deadline = time.monotonic() + 10
    while os_threads() > bound and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os_threads() <= bound, (before, os_threads())
    # Without reuse, each size would keep its pool: 2 + 3 + ... + top threads.
    assert os_threads() < before + sum(range(2, top + 1))


def test_inspect_errors_name_the_python_argument():
    with pytest.raises(ValueError, match=r"with source='FORMAT' \(e\.g\. source='f16'\)") as e:
        lowp.inspect("0x3c00")
    assert "--" not in str(e.value)
    with pytest.raises(ValueError, match="invalid value 'x1'") as e:
        lowp.inspect("x1")
    assert "source='FORMAT'" in str(e.value) and "--" not in str(e.value)
