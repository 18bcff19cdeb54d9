"""Bad input raises a cairn.Error subclass that carries Cairn's code and names the cause."""

from __future__ import annotations

import numpy as np
import pytest
from mpi4py import MPI

import cairn
from conftest import write_config


def test_calls_before_init_raise_not_initialized() -> None:
    with pytest.raises(cairn.NotInitializedError) as caught:
        cairn.checkpoint("early", 0)
    assert caught.value.code == -2 and caught.value.message


def test_a_bad_config_key_is_named(comm: MPI.Comm, config: str) -> None:
    bad = write_config(config + ".bad", '[placement]\nno_such_key = 1\n')
    with pytest.raises(cairn.ConfigError) as caught:
        cairn.init(comm, bad)
    assert caught.value.code == -4
    assert "no_such_key" in str(caught.value)


def test_init_wants_a_communicator() -> None:
    with pytest.raises(TypeError, match="mpi4py communicator"):
        cairn.init(comm=42)


def test_second_init_raises_already_initialized(comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config):
        with pytest.raises(cairn.AlreadyInitializedError):
            cairn.init(comm, config)


@pytest.mark.parametrize("make, why", [
    (lambda: np.zeros((6, 6))[:, ::2], "not C-contiguous"),
    (lambda: np.asfortranarray(np.zeros((4, 5))), "not C-contiguous"),
    (lambda: np.frombuffer(b"\0" * 64, dtype=np.uint8), "read-only"),
    (lambda: np.array([object(), object()]), "Python objects"),
])
def test_arrays_cairn_cannot_register_are_value_errors(comm: MPI.Comm, config: str, make,
                                                      why: str) -> None:
    with cairn.session(comm, config) as c:
        with pytest.raises(ValueError, match=why) as caught:
            c.protect(4, make())
        assert isinstance(caught.value, cairn.InvalidArgumentError)
        assert caught.value.code == -1 and "cairn.protect(4)" in str(caught.value)


def test_protect_wants_a_numpy_array(comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config) as c:
        with pytest.raises(TypeError, match="numpy.ndarray"):
            c.protect(0, [1.0, 2.0])


def test_bad_names_and_ids_are_invalid_arguments(comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config) as c:
        with pytest.raises(cairn.InvalidArgumentError):
            c.protect(-1, np.zeros(4))
        c.protect(0, np.zeros(4))
        with pytest.raises(cairn.InvalidArgumentError, match=r"\.\./x|name"):
            c.checkpoint("../x", 1)


def test_restart_of_a_missing_version_names_the_checkpoint(comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config) as c:
        c.protect(0, np.zeros(4))
        assert c.restart_test("absent") is None
        with pytest.raises(cairn.Error) as caught:
            c.restart("absent", 1)
        assert caught.value.code < 0 and "absent" in str(caught.value)


def test_restart_into_other_regions_is_a_mismatch_and_leaves_them_untouched(
        comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config) as c:
        c.protect(0, np.zeros(16))
        c.checkpoint("shape", 1)
        other = np.full(8, 3.0)
        c.protect(0, other)
        with pytest.raises(cairn.MismatchError):
            c.restart("shape", 1)
        assert np.all(other == 3.0)


def test_session_finalizes_on_exit(comm: MPI.Comm, config: str) -> None:
    with cairn.session(comm, config) as c:
        c.protect(0, np.zeros(4))
    with pytest.raises(cairn.NotInitializedError):
        cairn.checkpoint("after", 0)
