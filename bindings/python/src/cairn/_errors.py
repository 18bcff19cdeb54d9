"""The exceptions of the cairn package: one class per Cairn status code.

Every class derives from :class:`cairn.Error`, which carries Cairn's code
(a negative ``CAIRN_E_*`` value of cairn.h) and its message (the cause, naming
the file, key or rank). Bad input is also a :class:`ValueError`, an I/O
failure also an :class:`OSError`, so that generic handlers catch them too.
"""

from __future__ import annotations


class Error(Exception):
    """A Cairn call failed. ``code`` is the CAIRN_E_* value, ``message`` the cause."""

    code: int = -11

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(Error, ValueError):
    """Bad input: a bad name or version, an array Cairn cannot register."""

    code = -1


class NotInitializedError(Error):
    """A call before cairn.init or after cairn.finalize."""

    code = -2


class AlreadyInitializedError(Error):
    """cairn.init while a Cairn instance is open in this process."""

    code = -3


class ConfigError(Error):
    """An unknown key or a bad value in the configuration (file or environment)."""

    code = -4


class StorageIOError(Error, OSError):
    """The operating system reported an error on a tier."""

    code = -5


class NoSpaceError(Error):
    """A tier is full."""

    code = -6


class CorruptError(Error):
    """Stored data failed verification."""

    code = -7


class NotFoundError(Error):
    """No such checkpoint, version or region."""

    code = -8


class MismatchError(Error):
    """The protected regions differ from the checkpoint's."""

    code = -9


class CommError(Error):
    """MPI reported an error."""

    code = -10


class InternalError(Error):
    """A bug in Cairn: please report it."""

    code = -11


class UnsupportedError(Error):
    """A feature this system does not offer."""

    code = -12


_BY_CODE: dict[int, type[Error]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotInitializedError,
        AlreadyInitializedError,
        ConfigError,
        StorageIOError,
        NoSpaceError,
        CorruptError,
        NotFoundError,
        MismatchError,
        CommError,
        InternalError,
        UnsupportedError,
    )
}


def from_code(code: int, message: str) -> Error:
    """The exception for a Cairn status code (a code newer than this package: Error)."""
    cls = _BY_CODE.get(code, Error)
    return cls(message, code)
