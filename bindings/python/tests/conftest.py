"""Fixtures of the cairn tests. They run in one process (pytest) or in every
rank of an MPI job (mpirun -np 4 python -m pytest ...): then every rank runs
the same tests in the same order, so the collective calls match up."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Iterator

import pytest
from mpi4py import MPI

SEED = 20261124  # fixed: every random array is drawn from SEED and the rank


def pytest_report_header() -> str:
    return f"cairn tests: seed {SEED}, {MPI.COMM_WORLD.Get_size()} rank(s)"


@pytest.fixture
def comm() -> MPI.Comm:
    return MPI.COMM_WORLD


@pytest.fixture
def config(comm: MPI.Comm) -> Iterator[str]:
    """A configuration whose tiers live in a fresh directory that every rank shares."""
    root = tempfile.mkdtemp(prefix="cairn-py-") if comm.Get_rank() == 0 else None
    root = comm.bcast(root, root=0)
    path = os.path.join(root, f"cairn-{comm.Get_rank()}.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'[general]\ndir = "{root}/data"\nlog_level = "error"\n'
                f'[tiers.memory]\npath = "{root}/shm/{{node}}"\n')
    yield path
    comm.Barrier()
    if comm.Get_rank() == 0:
        shutil.rmtree(root, ignore_errors=True)


def write_config(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path
