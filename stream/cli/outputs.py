"""Where a command writes its files: never over a file it reads, never over a file that is not
one of its own earlier outputs unless told to (``--force``), and all at once.

Decided (issue 45; docs/commands.md, "Output files"):

- **A file the command reads is never written**, ``--force`` or not: ``replay h.jsonl --out
  h.jsonl`` replaced the history with its ratings. Two outputs of one command may not be one
  file either. Files are compared as the system sees them (the same file under two names, a
  link, counts as the same).
- **An existing file is replaced only if it is empty or reads as what this very output
  writes**: its first line is a replay's final ratings for ``replay --out``, predictions for
  ``evaluate --predictions``, a picture for ``--plot``, and so on. A re-run replaces its own
  result without a word; anything else (a history, a corrections file, notes) needs
  ``--force``, and the refusal says what the file reads as. Outputs that are histories
  themselves (``simulate --out``, ``inputs export --out``) always need ``--force`` to replace
  an existing file: a simulated history cannot be told from a real one.
- **Written all at once**: to a temporary file beside the target, renamed over it at the end;
  a crash or an error leaves the old file whole (or no file), never half of one. Then one line
  on stderr says what was written: ``wrote 99 final ratings to out.jsonl``.

Every refusal is a :class:`stream.errors.UserError`: one line naming the option and the file,
exit code 2.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO, TypeVar

import orjson

from stream.errors import UserError

__all__ = [
    "CHANGES",
    "CORRECTIONS",
    "HISTORY",
    "LEADERBOARD_CHANGE",
    "PICTURE",
    "POPULATIONS",
    "PREDICTIONS",
    "RATINGS",
    "SEEDS",
    "WORDED",
    "Kind",
    "Output",
    "check_outputs",
    "written",
    "written_by",
    "written_text",
]

# How much of an existing file is read to tell what it is.
HEAD_BYTES = 65_536


@dataclass(frozen=True)
class Kind:
    """What an output holds: its name in messages (``unit``: what one of its lines is, for
    the "wrote N ..." line), whether an existing file of it may be replaced without
    ``--force`` (``replaceable``), and how its first line looks."""

    name: str
    unit: str
    looks_like: Callable[[bytes], bool]
    replaceable: bool = True


def _json(line: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _keys(*names: str, without: tuple[str, ...] = ()) -> Callable[[bytes], bool]:
    def check(line: bytes) -> bool:
        found = _json(line)
        return found is not None and set(names) <= found.keys() and not set(without) & found.keys()

    return check


# A final rating has Rank Points, which a seed rating (the same player, mode and rating, often
# the same games) never does: a seed file is not replaced as if it were replay's last output.
RATINGS = Kind(
    "final ratings",
    "final ratings",
    _keys("player_id", "mode", "rating", "rank_points", without=("match_id",)),
)
SEEDS = Kind("seed ratings", "seed ratings", _keys("player_id", "rating"), replaceable=False)
CHANGES = Kind("rating changes", "rating changes", _keys("player_id", "match_id", "version"))
WORDED = Kind(
    "worded rating changes", "lines", lambda line: re.fullmatch(rb"\S+ \S+:", line) is not None
)
LEADERBOARD_CHANGE = Kind(
    "a leaderboard change",
    "lines",
    lambda line: re.match(rb"mode \S+: [\d,]+ players", line) is not None,
)
PREDICTIONS = Kind("predictions", "predictions", _keys("row", "p", "actual", "played_at"))
POPULATIONS = Kind("learned populations", "records", _keys("mode", "population"))
PICTURE = Kind(
    "a picture",
    "pictures",
    lambda head: head.startswith((b"\x89PNG", b"%PDF", b"<?xml", b"<svg")),
)
CORRECTIONS = Kind("corrections", "corrections", _keys("id", "kind", "by", "at", "reason"))
HISTORY = Kind(
    "a match history",
    "matches",
    lambda line: line.startswith(b"played_at") or _keys("match_id", "finished_at")(line),
    replaceable=False,
)
# What an existing file may read as, to name it in a refusal (the first that matches).
KNOWN = (
    RATINGS,
    CHANGES,
    SEEDS,
    PREDICTIONS,
    POPULATIONS,
    CORRECTIONS,
    HISTORY,
    WORDED,
    LEADERBOARD_CHANGE,
    PICTURE,
)


@dataclass(frozen=True)
class Output:
    """One file a command writes: the option naming it, the path (None: not asked for, or
    stdout), and what it holds."""

    option: str
    path: Path | None
    kind: Kind


def check_outputs(
    reads: Mapping[str, Path | str | None],
    outputs: Sequence[Output],
    *,
    force: bool = False,
) -> None:
    """Before anything is read or written: refuse (UserError, one line) an output that is a
    file the command reads (``reads``: what each is, e.g. "the history it reads"), two
    outputs on one file, and an existing file that is not empty and does not read as the
    output's kind unless ``force`` (module docstring)."""
    named = [o for o in outputs if o.path is not None and str(o.path) != "-"]
    if force and not named:
        options = " or ".join(sorted({o.option for o in outputs})) or "an output file"
        raise UserError(f"--force replaces an existing output file, and none is given ({options})")
    taken: list[Output] = []
    for output in outputs:
        path = output.path
        if path is None or str(path) == "-":
            continue
        for what, source in reads.items():
            if source is not None and str(source) != "-" and _same(path, Path(source)):
                raise UserError(
                    f"{output.option} {path} is {what}: writing it would destroy it; choose"
                    " another file"
                )
        for other in taken:
            assert other.path is not None
            if _same(path, other.path):
                raise UserError(
                    f"{output.option} and {other.option} are the same file ({path}): choose two"
                )
        taken.append(output)
        if force or not path.exists():
            continue
        head = _head(path)
        if not head.strip():
            continue
        if output.kind.replaceable and output.kind.looks_like(head):
            continue
        seen = next((k.name for k in KNOWN if k.looks_like(head)), "something else")
        hint = (
            "it may hold data of its own"
            if not output.kind.replaceable
            else f"not {output.kind.name} from an earlier run"
        )
        raise UserError(
            f"{output.option} {path} exists and reads as {seen} ({hint}): choose another file,"
            " or add --force to replace it"
        )


def written(command: str, output: Output) -> contextlib.AbstractContextManager[IO[bytes]]:
    """The file to write ``output`` into (stdout's bytes when it has no path): a temporary
    file beside the target, renamed over it once the block ends without an error; then
    ``wrote N <unit> to FILE`` on stderr (N: its lines). On an error the temporary file is
    removed and the target left as it was."""
    return _written(command, output, lambda: sys.stdout.buffer, lambda path: path.open("wb"))


def written_text(command: str, output: Output) -> contextlib.AbstractContextManager[TextIO]:
    """:func:`written` for a text writer (the CSV module: no newline translation)."""
    return _written(
        command,
        output,
        lambda: sys.stdout,
        lambda path: path.open("w", newline="", encoding="utf-8"),
    )


# A file written as bytes or as text.
_File = TypeVar("_File", IO[bytes], TextIO)


@contextlib.contextmanager
def _written(
    command: str, output: Output, stdout: Callable[[], _File], open_file: Callable[[Path], _File]
) -> Iterator[_File]:
    """:func:`written`, with ``stdout`` (called only when there is no path: not every stdout
    has bytes) and ``open_file`` to open the temporary file."""
    path = output.path
    if path is None or str(path) == "-":
        yield stdout()
        return
    with _replacing(path, ".part") as temporary, open_file(temporary) as file:
        yield file
    print(
        f"skillstream {command}: wrote {_lines(path):,} {output.kind.unit} to {path}",
        file=sys.stderr,
    )


@contextlib.contextmanager
def written_by(command: str, output: Output) -> Iterator[Path]:
    """For a writer that takes a path (matplotlib): the temporary path to give it (with the
    target's suffix), renamed over the target once the block ends without an error."""
    assert output.path is not None
    with _replacing(output.path, output.path.suffix) as temporary:
        yield temporary
    print(f"skillstream {command}: wrote {output.kind.name} to {output.path}", file=sys.stderr)


@contextlib.contextmanager
def _replacing(path: Path, suffix: str) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed over it at the end of a block that did not
    raise, removed otherwise (a crash leaves it, named ``.NAME.*``, never ``path`` half)."""
    folder = path.parent if str(path.parent) else Path(".")
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=folder)
    os.close(handle)
    # mkstemp makes it private: give it the mode the file has, or a new file would get.
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(name, mode)
    try:
        yield Path(name)
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def _lines(path: Path) -> int:
    """The records written: lines, less a CSV history's header line."""
    with path.open("rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return lines - 1 if _head(path).startswith(b"played_at") else lines


def _same(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _head(path: Path) -> bytes:
    """The first line of ``path`` (at most HEAD_BYTES), or its first bytes if it has none."""
    try:
        with path.open("rb") as f:
            head = f.read(HEAD_BYTES)
    except OSError:
        return b""
    stripped = head.lstrip()
    return stripped.split(b"\n", 1)[0].strip() if not stripped.startswith(b"\x89PNG") else head
