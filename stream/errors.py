"""The one exception type the command line prints as a single line (exit code 2).

Every mistake a user can fix (a file, a setting, an argument, an unreachable server named by a
setting) is raised as a ``UserError`` subclass whose message names the culprit; ``skillstream``
prints ``skillstream COMMAND: error: MESSAGE`` and exits 2, with no traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """A mistake the user can fix; its message names the file, variable or value."""


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    """``"; did you mean 'X'?"`` for the known name closest to ``name``, or ``""`` when none
    is close: the end of a message about a name nothing knows."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""
