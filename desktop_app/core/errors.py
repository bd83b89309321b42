"""Two families of errors: the environment's fault (KnownError) and bugs (everything else).

Qt-free.
"""

from __future__ import annotations


class KnownError(Exception):
    """A failure caused by the environment, with a message meant for the user.

    Examples: an unreadable PDF, a wrong password, a missing model, a full disk.
    ``hint`` names what the user can do about it (a command, a setting).
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip() if self.hint else self.message


class ModelMissingError(KnownError):
    """A model file is not installed or failed its checksum."""


class Cancelled(Exception):
    """Raised inside a worker when the user cancelled the operation."""
