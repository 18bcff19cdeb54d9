"""Protect / checkpoint / restart round trips: every byte comes back."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest
from mpi4py import MPI

import cairn
from conftest import SEED

DTYPES = [np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.complex64, np.complex128, np.bool_,
          np.dtype([("x", np.float64), ("n", np.int32), ("tag", "S3")])]
SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4), (1, 2, 1, 3, 1, 2), (4096 + 3,), (64, 130)]


def random_array(rng: np.random.Generator, dtype, shape) -> np.ndarray:
    """Random bytes of that dtype and shape: every bit pattern, NaNs and -0.0 included."""
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape, dtype=np.int64)) * dtype.itemsize,
                       dtype=np.uint8)
    array = raw.view(dtype).reshape(shape) if dtype != np.bool_ else (raw > 127).reshape(shape)
    return np.ascontiguousarray(array)


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_every_dtype_and_shape_round_trips(comm: MPI.Comm, config: str) -> None:
    rng = np.random.default_rng([SEED, comm.Get_rank()])
    arrays = [random_array(rng, dtype, shape) for dtype in DTYPES for shape in SHAPES]
    originals = [a.copy() for a in arrays]
    with cairn.session(comm, config) as c:
        for region_id, array in enumerate(arrays):
            c.protect(region_id, array)
        c.checkpoint("roundtrip", 3)
        for array in arrays:  # ruin the state in place
            array.view(np.uint8)[...] = 0xA5
        assert c.restart_test("roundtrip") == 3
        assert c.restart("roundtrip", 3) == 3
    for region_id, (array, original) in enumerate(zip(arrays, originals)):
        assert same_bytes(array, original), (
            f"region {region_id} ({array.dtype}, {array.shape}) differs (seed {SEED})")


def test_restart_finds_the_newest_version_and_older_ones_on_request(comm: MPI.Comm,
                                                                    config: str) -> None:
    state = np.arange(1000, dtype=np.float64) * (comm.Get_rank() + 1)
    with cairn.session(comm, config) as c:
        c.protect(0, state)
        for version in (1, 2, 3):
            state[:] = version + comm.Get_rank()
            c.checkpoint("versions", version)
        c.checkpoint_wait()
        state[:] = -1.0
        assert c.restart_test("versions") == 3
        assert c.restart_test("versions", max_version=2) == 2
        assert c.restart("versions", 2) == 2
        assert np.all(state == 2 + comm.Get_rank())


def test_a_view_into_a_bigger_array_restores_in_place(comm: MPI.Comm, config: str) -> None:
    grid = np.zeros((10, 6))
    owned = grid[1:-1]  # C-contiguous rows between two halo rows
    owned[...] = np.arange(owned.size, dtype=np.float64).reshape(owned.shape)
    expected = grid.copy()
    with cairn.session(comm, config) as c:
        c.protect(0, owned)
        c.checkpoint("view", 0)
        grid[...] = 7.0
        c.restart("view", 0)
    assert np.array_equal(grid[1:-1], expected[1:-1])
    assert np.all(grid[0] == 7.0) and np.all(grid[-1] == 7.0)  # halos untouched


def test_info_dataclasses_describe_the_last_calls(comm: MPI.Comm, config: str) -> None:
    state = np.ones(4096, dtype=np.uint8)
    with cairn.session(comm, config) as c:
        with pytest.raises(cairn.NotFoundError):
            c.last_restart()
        c.protect(0, state)
        c.checkpoint("info", 5, durable=True)
        done = c.last_checkpoint()
        assert dataclasses.is_dataclass(done)
        assert (done.version, done.number, done.forced, done.skipped) == (5, 1, True, False)
        assert done.tier == "ssd" and done.bytes > 0
        c.restart("info", 5)
        back = c.last_restart()
        assert (back.requested, back.version, back.newest) == (5, 5, 5)
        assert back.tier in ("memory", "ssd", "pfs") and back.bytes > 0


@pytest.mark.parametrize("ecc_sync", [False, True])
def test_ecc_protection_time_is_reported(comm: MPI.Comm, config: str, ecc_sync: bool) -> None:
    """ecc_protected_after: -1 for an unprotected copy; once the sidecar is
    encoded, the seconds after the commit (0 when encoded inside the call)."""
    with open(config, "a", encoding="utf-8") as f:
        f.write(f'ecc = "normal"\necc_sync = {"true" if ecc_sync else "false"}\n'
                '[placement]\npolicy = "memory"\n')
    state = np.arange(1 << 16, dtype=np.float64)
    with cairn.session(comm, config) as c:
        c.protect(0, state)
        c.checkpoint("ecc", 1)
        if ecc_sync:
            assert c.last_checkpoint().ecc_protected_after == 0.0
        c.checkpoint_wait()
        done = c.last_checkpoint()
        assert done.tier == "memory"
        assert done.ecc_protected_after >= 0.0
        assert (done.ecc_protected_after == 0.0) == ecc_sync
        state[:] = 0
        c.restart("ecc", 1)
    assert np.array_equal(state, np.arange(1 << 16, dtype=np.float64))


def test_dedup_page_counts_are_reported(comm: MPI.Comm, config: str) -> None:
    """With [dedup] on, the pages of a version add up to the protected pages,
    the repeated ones are duplicates, and the version restores bit-exact."""
    with open(config, "a", encoding="utf-8") as f:
        f.write('[dedup]\nmode = "local"\n')
    pages = 64
    state = np.zeros(pages * 4096, dtype=np.uint8)
    for p in range(pages):
        state[p * 4096:(p + 1) * 4096] = p % 8  # 8 distinct pages
    expected = state.copy()
    with cairn.session(comm, config) as c:
        c.protect(0, state)
        c.checkpoint("dd", 1)
        info = c.last_checkpoint()
        assert info.pages_unique == 8
        assert info.pages_local_dup == pages - 8
        assert info.pages_hashed == pages
        assert 0 <= info.pages_hashed_in_copy <= info.pages_hashed
        assert not info.dedup_whole
        state[:] = 255
        c.restart("dd", 1)
    assert np.array_equal(state, expected)


def test_versions_that_save_nothing_are_followed_by_whole_ones(comm: MPI.Comm,
                                                                config: str) -> None:
    """Pages nothing deduplicates: the version after a planned one is written
    whole (dedup_whole, nothing hashed), and restores bit-exact."""
    with open(config, "a", encoding="utf-8") as f:
        f.write('[dedup]\nmode = "local"\nprobe_every = 4\n')
    state = np.arange(1 << 16, dtype=np.float64) + comm.rank * (1 << 16)
    with cairn.session(comm, config) as c:
        c.protect(0, state)
        c.checkpoint("unique", 0)
        assert not c.last_checkpoint().dedup_whole
        state += 0.5
        c.checkpoint("unique", 1)
        info = c.last_checkpoint()
        assert info.dedup_whole
        assert info.pages_hashed == 0 and info.pages_local_dup == 0
        expected = state.copy()
        state[:] = 0
        c.restart("unique", 1)
    assert np.array_equal(state, expected)
    off = cairn.CheckpointInfo(version=0, number=0, skipped=False, forced=False, tier="",
                               rule="", seconds=0.0, bytes=0, reason="")
    assert off.pages_unique == 0 and off.dedup_hash_seconds == 0.0


def test_routed_files_come_back(comm: MPI.Comm, config: str) -> None:
    content = f"rank {comm.Get_rank()} state\n".encode() * 100
    with cairn.session(comm, config) as c:
        path = c.route_file("state.txt")
        with open(path, "wb") as f:
            f.write(content)
        c.checkpoint("files", 1)  # takes the file into the checkpoint
        with open(c.route_file("state.txt"), "wb") as f:
            f.write(b"overwritten after the checkpoint")
        c.restart("files", 1)
        with open(c.route_file("state.txt"), "rb") as f:
            assert f.read() == content


def test_unprotect_and_delete(comm: MPI.Comm, config: str) -> None:
    state = np.zeros(8)
    with cairn.session(comm, config) as c:
        c.protect(0, state)
        c.checkpoint("gone", 1)
        c.unprotect(0)
        with pytest.raises(cairn.NotFoundError):
            c.unprotect(0)
        c.checkpoint("gone", 2)
        c.delete_version("gone", 2)
        assert c.restart_test("gone") == 1
        c.delete("gone")
        assert c.restart_test("gone") is None


def test_single_process_mode_without_a_communicator(comm: MPI.Comm, config: str) -> None:
    if comm.Get_size() > 1:
        pytest.skip("one process only: init(None) makes every rank its own job")
    state = np.linspace(0.0, 1.0, 33)
    original = state.copy()
    with cairn.session(None, config) as c:
        c.protect(0, state)
        c.checkpoint("single", 0)
        state[:] = 0.0
        c.restart("single", 0)
    assert same_bytes(state, original)


def test_version_is_the_library_version() -> None:
    assert cairn.version().count(".") == 2
