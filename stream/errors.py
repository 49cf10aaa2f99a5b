"""The one exception type the command line prints as a single line (exit code 2).

Every mistake a user can fix (a file, a setting, an argument, an unreachable server named by a
setting) is raised as a ``UserError`` subclass whose message names the culprit; ``skillstream``
prints ``skillstream COMMAND: error: MESSAGE`` and exits 2, with no traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake the user can fix; its message names the file, variable or value."""
