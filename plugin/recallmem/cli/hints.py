"""Error messages in the shell's terms: the next step is a command to type, not a Python call.

The library's errors carry what went wrong as data (the id, the user); here that becomes a
line that names the ``recallmem`` command which finds a valid one.

>>> from recallmem.errors import FactNotFoundError
>>> print(cli_message(FactNotFoundError("0f3a", "ada")).replace("; ", ";\\n"))
user 'ada' has no fact with id '0f3a';
list that user's ids with: recallmem list --user ada --status all
"""

from __future__ import annotations

import shlex

from recallmem.errors import DeadLetterNotFoundError, FactNotFoundError, MissingScopeError


def cli_message(exc: Exception) -> str:
    """The error's text, with a CLI next step where the library's names a Python call."""
    if isinstance(exc, FactNotFoundError):
        if exc.user_id is None:
            return (
                f"{exc.problem()}; list a user's ids with: recallmem list --user USER "
                "--status all (any unique prefix of an id works)"
            )
        user = shlex.quote(exc.user_id)
        return (
            f"{exc.problem()}; list that user's ids with: recallmem list --user {user} --status all"
        )
    if isinstance(exc, DeadLetterNotFoundError):
        return f"no dead letter with id {exc.letter_id}; list them with: recallmem dead-letters"
    if isinstance(exc, MissingScopeError):
        return "this command needs a user: give --user USER (every memory belongs to one user)"
    return str(exc)
