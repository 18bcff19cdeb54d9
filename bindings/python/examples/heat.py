#!/usr/bin/env python3
"""heat.py — the 2D heat equation of examples/heat (without its hot squares), in Python.

An explicit 5-point stencil on an R x C grid, split across the ranks in blocks
of rows; neighbours swap one halo row each way every step. The top edge is
held at 100 degrees, the rest of the border at 0. The state protected with
Cairn is the rank's block of rows and the step counter; every K steps the job
checkpoints as version = step, and at start it restores the newest version
every rank can recover. The update of every cell is the same sequence of
floating-point operations whatever the rank count, so the final grid is
bit-for-bit the same with or without kills and restarts.

  mpirun -np 4 python heat.py --steps N --every K --rows R --cols C [--config F] [--out F]

Rank 0 prints "heat: resumed from version V (step S)" after a restart,
"step S checkpointed" after every checkpoint (flushed at once), and
"heat: done, ..." at the end; with --out it writes the final grid as R*C raw
float64 values (row-major, native byte order).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from mpi4py import MPI

import cairn

ALPHA = 0.2  # diffusion number; the explicit scheme is stable below 0.25
TOP_EDGE = 100.0
REGION_GRID, REGION_STEP = 0, 1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, required=True, help="time steps in total")
    parser.add_argument("--every", type=int, required=True, help="checkpoint every K steps")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--cols", type=int, required=True)
    parser.add_argument("--config", help="Cairn configuration (TOML)")
    parser.add_argument("--out", help="write the final grid there (raw float64)")
    return parser.parse_args(argv)


def block_of_rows(rows: int, rank: int, size: int) -> tuple[int, int]:
    """(first global row, row count) of this rank: the first rows % size ranks get one more."""
    base, extra = divmod(rows, size)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)


def initial_grid(row0: int, nloc: int, rows: int, cols: int) -> np.ndarray:
    """This rank's rows plus two halo rows: the top edge hot, the rest of the border cold."""
    u = np.zeros((nloc + 2, cols))
    for li in range(nloc + 2):
        if row0 + li - 1 == 0:
            u[li, :] = TOP_EDGE
    return u


def exchange_halos(comm: MPI.Comm, u: np.ndarray) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    comm.Sendrecv(u[1], dest=up, sendtag=0, recvbuf=u[-1], source=down, recvtag=0)
    comm.Sendrecv(u[-2], dest=down, sendtag=1, recvbuf=u[0], source=up, recvtag=1)


def step_once(u: np.ndarray, first: int, last: int) -> None:
    """One Jacobi sweep over local rows first..last (interior columns), in place."""
    c = u[first:last + 1, 1:-1]
    update = c + ALPHA * ((u[first - 1:last, 1:-1] + u[first + 1:last + 2, 1:-1])
                          + (u[first:last + 1, :-2] + u[first:last + 1, 2:]) - 4.0 * c)
    u[first:last + 1, 1:-1] = update


def run(args: argparse.Namespace, comm: MPI.Comm) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    row0, nloc = block_of_rows(args.rows, rank, size)
    u = initial_grid(row0, nloc, args.rows, args.cols)
    step = np.zeros(1, dtype=np.int64)
    first = 2 if row0 == 0 else 1  # global row 0 is boundary
    last = nloc - 1 if row0 + nloc == args.rows else nloc  # so is the last row

    with cairn.session(comm, args.config) as c:
        # The owned rows, without the halos (the exchange rebuilds them): a
        # contiguous view of u, registered in place.
        c.protect(REGION_GRID, u[1:-1])
        c.protect(REGION_STEP, step)
        latest = c.restart_test("heat")
        if latest is not None:
            restored = c.restart("heat", latest)
            if rank == 0:
                print(f"heat: resumed from version {restored} (step {step[0]})", flush=True)
        elif rank == 0:
            print("heat: no checkpoint to restart from, starting at step 0", flush=True)

        while step[0] < args.steps:
            exchange_halos(comm, u)
            step_once(u, first, last)
            step[0] += 1
            if step[0] % args.every == 0:
                c.checkpoint("heat", int(step[0]))
                if rank == 0:
                    print(f"step {step[0]} checkpointed", flush=True)

        grid = comm.gather(u[1:-1].copy(), root=0)
        if rank == 0:
            full = np.concatenate(grid)
            if args.out:
                full.tofile(args.out)
            print(f"heat: done, step {step[0]}, mean temperature {full.mean():.17g}", flush=True)
        c.checkpoint_wait()


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.rows < comm.Get_size() or args.rows < 3 or args.cols < 3 or args.every < 1:
        if comm.Get_rank() == 0:
            print("heat: need rows >= ranks, rows >= 3, cols >= 3, every >= 1", file=sys.stderr)
        return 2
    try:
        run(args, comm)
    except cairn.Error as error:
        # Take the whole job down: a lone rank that returned would leave the
        # others waiting in the next collective.
        print(f"heat: rank {comm.Get_rank()}: {type(error).__name__}: {error}", file=sys.stderr,
              flush=True)
        comm.Abort(1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
