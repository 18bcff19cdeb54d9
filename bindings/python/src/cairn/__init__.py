"""Cairn: multi-level checkpoint/restart for MPI applications, from Python.

Register the numpy arrays that make up your state, checkpoint them every few
iterations, and restore them after a failure::

    from mpi4py import MPI
    import numpy as np
    import cairn

    grid = np.zeros((512, 512))
    step = np.zeros(1, dtype=np.int64)
    with cairn.session(MPI.COMM_WORLD) as c:
        c.protect(0, grid)
        c.protect(1, step)
        latest = c.restart_test("sim")
        if latest is not None:
            c.restart("sim", latest)          # fills grid and step in place
        while step[0] < 1000:
            ...                               # advance grid
            step[0] += 1
            if step[0] % 100 == 0:
                c.checkpoint("sim", int(step[0]))

Arrays are registered without a copy: Cairn reads them at checkpoint and
writes them at restart, so keep using the same array objects (update them in
place). The package holds a reference to every protected array until it is
unprotected or Cairn is finalized.

Calls marked collective must be made by every rank of the communicator, in
the same order. They release the GIL. Every failure raises a subclass of
:class:`cairn.Error` carrying Cairn's code and message. docs/api.md of the
Cairn repository states the full rules; the functions here follow cairn.h.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator, Optional

import numpy as np

from . import _core
from ._errors import (
    AlreadyInitializedError,
    CommError,
    ConfigError,
    CorruptError,
    Error,
    InternalError,
    InvalidArgumentError,
    MismatchError,
    NoSpaceError,
    NotFoundError,
    NotInitializedError,
    StorageIOError,
    UnsupportedError,
)

__all__ = [
    "AlreadyInitializedError",
    "CheckpointInfo",
    "CommError",
    "ConfigError",
    "CorruptError",
    "Error",
    "InternalError",
    "InvalidArgumentError",
    "MismatchError",
    "NoSpaceError",
    "NotFoundError",
    "NotInitializedError",
    "RestartInfo",
    "Session",
    "StorageIOError",
    "UnsupportedError",
    "checkpoint",
    "checkpoint_wait",
    "delete",
    "delete_version",
    "finalize",
    "init",
    "last_checkpoint",
    "last_restart",
    "protect",
    "restart",
    "restart_test",
    "route_file",
    "session",
    "should_checkpoint",
    "unprotect",
    "version",
]

# The arrays whose buffers Cairn holds, by region id: the reference keeps each
# buffer alive (and in place) for as long as it is registered. One Cairn
# instance per process (cairn.h), hence one table per process.
_protected: dict[int, np.ndarray] = {}


@dataclasses.dataclass(frozen=True)
class CheckpointInfo:
    """What the last successful checkpoint of this process did (cairn_checkpoint_info)."""

    version: int  #: the version argument
    number: int  #: checkpoint call number since init, from 1
    skipped: bool  #: the placement controller skipped it: restart finds the previous one
    forced: bool  #: forced to the SSD tier (durable=True or placement.force_ssd_every)
    tier: str  #: "memory", "ssd" or "pfs"; "" when skipped
    rule: str  #: the placement rule that decided
    seconds: float  #: time inside the call on this rank
    bytes: int  #: bytes this rank wrote
    reason: str  #: one readable line: placement and why
    #: seconds from the commit until the memory copy was protected by its ECC
    #: sidecar (encoded in the background; 0: inside the call with
    #: tiers.memory.ecc_sync); -1 while not protected or without ECC
    ecc_protected_after: float = -1.0
    #: [dedup] (docs/dedup.md), all 0 with dedup.mode = "off": this rank's
    #: pages of this version by where their bytes are
    pages_unique: int = 0  #: stored by this rank in this version
    pages_local_dup: int = 0  #: equal to a page this rank stores
    pages_remote_ref: int = 0  #: stored once for the job by another rank
    pages_unchanged: int = 0  #: unchanged since the previous version
    pages_hashed: int = 0  #: pages whose digest was computed
    pages_hashed_in_copy: int = 0  #: of those, hashed in the pass that copied them
    dedup_hash_seconds: float = 0.0  #: hashing passes of their own
    dedup_reduce_seconds: float = 0.0  #: the collective top-K reduction
    #: written whole, nothing hashed: the last deduplicated version saved too
    #: little (dedup.min_saving; until the next dedup.probe_every-th)
    dedup_whole: bool = False


@dataclasses.dataclass(frozen=True)
class RestartInfo:
    """What the last successful restart of this process did (cairn_restart_info)."""

    requested: int  #: the version argument
    version: int  #: the version restored
    newest: int  #: newest version any rank has any copy of
    rollback_versions: int  #: newest - version
    rollback_seconds: float  #: creation time of newest minus that of version (0: unknown)
    versions_failed: int  #: agreed versions that failed verification on some rank
    tier: str  #: where this rank read from
    bytes: int  #: bytes this rank read
    seconds: float  #: time inside the call on this rank
    ecc_shards_corrected: int  #: shards of the memory copy corrected from ECC


def version() -> str:
    """The version of the Cairn library loaded, "major.minor.patch"."""
    return _core.version()


def init(comm: Any = None, config: Optional[str] = None) -> None:
    """Starts Cairn in this process. Collective over ``comm``.

    ``comm`` is an mpi4py communicator (duplicated by Cairn; you may free
    yours), or None for a process that does not use MPI. ``config`` is the
    path of a TOML configuration; None: ``$CAIRN_CONFIG`` if set, else the
    built-in defaults; ``CAIRN_<SECTION>_<KEY>`` variables override either.
    Raises ConfigError naming a bad key, AlreadyInitializedError, ...
    """
    if comm is None:
        _core.init_single(config)
        return
    py2f = getattr(comm, "py2f", None)
    if py2f is None:
        raise TypeError(
            f"cairn.init: comm must be an mpi4py communicator or None, not {type(comm).__name__}"
        )
    _core.init_mpi(py2f(), config)


def protect(region_id: int, array: np.ndarray) -> None:
    """Registers ``array``'s own buffer as region ``region_id`` (>= 0), without a copy.

    The array must be a C-contiguous, writeable numpy array of plain data (any
    dtype but object, any shape); otherwise InvalidArgumentError, which is a
    ValueError. Protecting an id again replaces its registration. Update the
    array in place (``a[...] = ...``): rebinding the name to a new array leaves
    Cairn with the old one.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(
            f"cairn.protect({region_id}): expected a numpy.ndarray, not {type(array).__name__}"
        )
    _core.protect(region_id, array)
    _protected[region_id] = array


def unprotect(region_id: int) -> None:
    """Forgets region ``region_id`` (NotFoundError if it was not protected)."""
    _core.unprotect(region_id)
    _protected.pop(region_id, None)


def checkpoint(name: str, version: int, durable: bool = False) -> None:
    """Collective. Saves every protected array as version ``version`` (>= 0) of ``name``.

    Returns once the version is committed on its first tier; draining to
    lower tiers goes on in the background (see checkpoint_wait). ``durable``
    sends this version to the SSD tier whatever the placement policy says.
    """
    _core.checkpoint(name, version, durable)


def checkpoint_wait() -> None:
    """Blocks until background work (drains to lower tiers) is done."""
    _core.checkpoint_wait()


def should_checkpoint() -> bool:
    """Collective. True when a checkpoint is due by ``[placement] interval``."""
    return _core.should_checkpoint()


def restart_test(name: str, max_version: int = -1) -> Optional[int]:
    """Collective. The newest version <= max_version (-1: any) of ``name`` that
    every rank can recover, or None when there is none. Errors raise."""
    return _core.restart_test(name, max_version)


def restart(name: str, version: int) -> int:
    """Collective. Fills every protected array from version ``version`` of ``name``.

    Falls back to slower tiers, then older versions, when a copy is missing
    or damaged; returns the version actually restored. MismatchError (arrays
    left untouched) when the protected regions differ from the checkpoint's.
    """
    return _core.restart(name, version)


def delete(name: str) -> None:
    """Collective. Removes every version of checkpoint ``name`` from every tier."""
    _core.delete(name)


def delete_version(name: str, version: int) -> None:
    """Collective. Removes version ``version`` of checkpoint ``name`` from every tier.

    A version no tier holds is not an error; with ``[dedup]``, InvalidArgumentError
    while a kept version's pages refer to it (delete that one first).
    """
    _core.delete_version(name, version)


def last_checkpoint() -> CheckpointInfo:
    """What the last successful checkpoint did (NotFoundError before the first)."""
    return CheckpointInfo(**_core.last_checkpoint())


def last_restart() -> RestartInfo:
    """What the last successful restart did (NotFoundError before the first)."""
    return RestartInfo(**_core.last_restart())


def route_file(logical: str) -> str:
    """The path where this rank writes (or, after restart, reads) file ``logical``.

    Files written there become part of the next checkpoint.
    """
    return _core.route_file(logical)


def finalize() -> None:
    """Collective. Waits for background work and releases Cairn; the protected
    arrays are released too."""
    _core.finalize()
    _protected.clear()


class Session:
    """The open Cairn instance of this process, as returned by :func:`session`.

    Its methods are the module's functions of the same name.
    """

    protect = staticmethod(protect)
    unprotect = staticmethod(unprotect)
    checkpoint = staticmethod(checkpoint)
    checkpoint_wait = staticmethod(checkpoint_wait)
    should_checkpoint = staticmethod(should_checkpoint)
    restart_test = staticmethod(restart_test)
    restart = staticmethod(restart)
    delete = staticmethod(delete)
    delete_version = staticmethod(delete_version)
    last_checkpoint = staticmethod(last_checkpoint)
    last_restart = staticmethod(last_restart)
    route_file = staticmethod(route_file)


@contextlib.contextmanager
def session(comm: Any = None, config: Optional[str] = None) -> Iterator[Session]:
    """``with cairn.session(comm, config) as c:`` — init on entry, finalize on exit.

    Finalize is collective: on an exception inside the block it still runs,
    so every rank should leave the block the same way.
    """
    init(comm, config)
    try:
        yield Session()
    finally:
        finalize()
