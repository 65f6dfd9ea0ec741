"""lowp.cast's results give their memory back to lowp when they die, and the next result of
about the same size takes it instead of fresh pages."""

import ml_dtypes
import numpy as np
import pytest

import lowp

try:
    from numpy._core.multiarray import get_handler_name
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import get_handler_name

MIB = 1 << 20
# 8 MiB of float32 out, 4 MiB of bf16: both at least the 4 MiB the cache keeps.
N = 2 * MIB


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test starts with nothing kept and the default limit, and leaves nothing kept."""
    lowp.empty_output_cache()
    previous = lowp.set_output_cache(1 << 30)
    yield
    lowp.set_output_cache(previous)
    lowp.empty_output_cache()


def values(seed, n=N):
    return np.random.default_rng(seed).standard_normal(n, dtype=np.float32)


def info():
    return lowp.output_cache()


def test_it_is_active_with_numpy_1_22_and_later():
    assert info()["active"]
    assert info()["limit"] == 1 << 30


def test_results_are_allocated_by_lowps_handler_and_nothing_else_is():
    x = values(0)
    wide = lowp.cast(x, "float32")
    narrow = lowp.cast(x, "bf16")
    assert get_handler_name(wide) == "lowp_output_cache"
    # A format's result is a view of its bits, which own the memory.
    assert get_handler_name(narrow.base) == "lowp_output_cache"
    # NumPy's own arrays, made after, use NumPy's handler again.
    assert get_handler_name(np.empty(N, np.float32)) == "default_allocator"
    assert get_handler_name(x.astype(ml_dtypes.bfloat16)) == "default_allocator"


def test_a_dead_results_memory_holds_the_next_result_and_only_its_values():
    first = lowp.cast(values(1).astype(ml_dtypes.bfloat16), "float32")
    address, nbytes = first.ctypes.data, first.nbytes
    before = info()
    del first
    assert (info()["held"], info()["blocks"]) == (nbytes, 1)
    b = values(2).astype(ml_dtypes.bfloat16)
    second = lowp.cast(b, "float32")
    assert second.ctypes.data == address
    assert info()["hits"] == before["hits"] + 1
    assert (info()["held"], info()["blocks"]) == (0, 0)
    assert np.array_equal(second, b.astype(np.float32))


@pytest.mark.parametrize("threads", [1, None])
def test_reused_memory_takes_any_type_and_order(threads):
    lowp.cast(values(3), "float32", threads=threads)  # 8 MiB, dead at once
    assert info()["blocks"] == 1
    # 2Mi float32 in Fortran order: 8 MiB again.
    f = np.asfortranarray(values(4).reshape(1024, 2048))
    y = lowp.cast(f, "float32", threads=threads)
    assert info()["blocks"] == 0
    assert y.flags.f_contiguous and np.array_equal(y, f)
    del y
    # 4Mi bf16 values are 8 MiB too: their bits are written over float32 values.
    x = values(5, 2 * N)
    narrow = lowp.cast(x, "bf16", threads=threads)
    assert info()["blocks"] == 0
    assert np.array_equal(narrow.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_a_small_request_does_not_take_a_large_block():
    big = lowp.cast(values(5, 8 * MIB), "float32")  # 32 MiB
    del big
    misses = info()["misses"]
    small = lowp.cast(values(6), "float32")  # 8 MiB
    assert info()["misses"] == misses + 1
    assert (info()["held"], info()["blocks"]) == (32 * MIB, 1)
    assert np.array_equal(small, values(6))


def test_a_view_keeps_the_block_until_it_dies_too():
    v = lowp.cast(values(7), "bf16")
    w = v[::2]
    del v
    assert info()["held"] == 0
    del w
    assert (info()["held"], info()["blocks"]) == (4 * MIB, 1)


def test_results_under_4_mib_go_back_to_numpy():
    before = info()
    small = lowp.cast(values(8, MIB - 1), "float32")  # just under 4 MiB
    del small
    assert info() == before


def test_the_oldest_blocks_go_when_the_limit_is_passed():
    lowp.set_output_cache(20 * MIB)
    results = [lowp.cast(values(s), "float32") for s in range(3)]  # 8 MiB each
    addresses = [r.ctypes.data for r in results]
    for i in range(3):  # freed first to last (`del results[:]` frees last to first)
        results[i] = None
    assert (info()["held"], info()["blocks"]) == (16 * MIB, 2)
    taken = [lowp.cast(values(9), "float32") for _ in range(2)]
    assert sorted(t.ctypes.data for t in taken) == sorted(addresses[1:])


def test_a_block_over_the_limit_is_not_kept():
    lowp.set_output_cache(6 * MIB)
    r = lowp.cast(values(10), "float32")
    del r
    assert info()["held"] == 0


def test_a_lower_limit_and_emptying_give_blocks_back():
    results = [lowp.cast(values(s), "float32") for s in range(3)]
    del results[:]
    assert info()["held"] == 24 * MIB
    assert lowp.set_output_cache(10 * MIB) == 1 << 30
    assert (info()["held"], info()["limit"]) == (8 * MIB, 10 * MIB)
    assert lowp.empty_output_cache() == 8 * MIB
    assert (info()["held"], info()["blocks"]) == (0, 0)
    assert lowp.empty_output_cache() == 0


def test_limit_zero_keeps_nothing():
    lowp.set_output_cache(0)
    r = lowp.cast(values(11), "float32")
    del r
    assert info()["held"] == 0


def test_a_resized_result_goes_back_to_numpy():
    r = lowp.cast(values(12), "float32")
    r.resize(N + MIB, refcheck=False)
    assert np.array_equal(r[:N], values(12)) and not r[N:].any()
    del r
    assert info()["held"] == 0
    # A kept block resized: the same.
    lowp.cast(values(13), "float32")
    r = lowp.cast(values(14), "float32")
    assert info()["hits"] >= 1
    r.resize(N // 2, refcheck=False)
    assert np.array_equal(r, values(14)[: N // 2])
    del r
    assert info()["held"] == 0


def test_out_arrays_are_not_touched():
    out = np.empty(N, np.float32)
    before = info()
    lowp.cast(values(15).astype(ml_dtypes.bfloat16), "float32", out=out)
    assert info() == before
    assert get_handler_name(out) == "default_allocator"


@pytest.mark.parametrize("limit", [-1, 1.5, "1", None])
def test_bad_limits_are_refused(limit):
    with pytest.raises(ValueError, match="limit must be an int of bytes >= 0"):
        lowp.set_output_cache(limit)
    assert info()["limit"] == 1 << 30


@pytest.mark.parametrize("huge", [2**70, 2**200])
def test_a_limit_past_the_address_space_means_no_limit(huge):
    lowp.set_output_cache(huge)
    assert info()["limit"] == 2**64 - 1


def test_casts_on_several_threads_keep_their_own_values():
    # The conversions run without the GIL, so one thread's result dies and its block is
    # taken by another while a third writes its own.
    import threading

    lowp.set_output_cache(24 * MIB)
    sources = [values(20 + t).astype(ml_dtypes.bfloat16) for t in range(4)]
    expected = [s.astype(np.float32) for s in sources]
    wrong = []
    hits = info()["hits"]

    def work(t):
        for _ in range(10):
            r = lowp.cast(sources[t], "float32")
            if not np.array_equal(r, expected[t]):
                wrong.append(t)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == []
    state = info()
    assert state["held"] == 8 * MIB * state["blocks"] <= 24 * MIB
    # 40 results, at most 4 alive at once: most take a block another thread's result freed.
    assert state["hits"] - hits >= 20
