"""A tiny progress bar for long offline commands, drawn on one terminal line.

Dependency-free on purpose: it only needs percent, rate and ETA, and a library would be one
more thing to install on game servers. tqdm and rich were weighed: both count one quantity
against its own total, while a history's bar counts matches (whose total is unknown until the
file is read) and takes its percent from the bytes read; both could only do that by drawing a
custom line, which is what this module is. By default it draws only on a terminal, so piped
or logged output stays clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import TextIO, TypeVar

T = TypeVar("T")

# Redraw at most this often: fast enough to look live, slow enough to cost nothing.
_INTERVAL = 0.1
_BAR_WIDTH = 24


class Progress:
    """Progress of ``total`` units (None when unknown: then no percent or ETA).

    ``update(done)`` takes the absolute amount done so far. ``unit`` "B" formats amounts as
    bytes (kB, MB, ...); any other unit is appended to plain counts. ``update(done, position)``
    counts ``done`` in ``unit`` while the percent and ETA come from ``position`` out of
    ``total`` (matches read, out of a file's bytes).
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        *,
        unit: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total if total is None or total > 0 else None
        self.label = label
        # Resolved now rather than as a default argument, so redirected stderr is honoured.
        self.stream = sys.stderr if stream is None else stream
        self.enabled = _isatty(self.stream) if enabled is None else enabled
        self.unit = unit
        self._clock = clock
        self._start = clock()
        self._last_draw: float | None = None
        self._done = 0
        self._position: int | None = None
        self._width = 0
        self._closed = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def update(self, done: int, position: int | None = None) -> None:
        """Record ``done`` units finished (and ``position`` out of ``total``, if it measures
        something else); redraws if the last draw is old enough."""
        self._done = done
        self._position = position
        if not self.enabled or self._closed:
            return
        now = self._clock()
        if self._last_draw is not None and now - self._last_draw < _INTERVAL:
            return
        self._last_draw = now
        self._draw(self._line(now, final=False), end="")

    def close(self) -> None:
        """Draw the final line and end it; further calls do nothing."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw(self._line(self._clock(), final=True), end="\n")

    def _line(self, now: float, *, final: bool) -> str:
        elapsed = max(now - self._start, 0.0)
        done = self._done
        rate = done / elapsed if elapsed > 0 else 0.0
        parts = [self.label]
        total = self.total
        position = done if self._position is None else self._position
        fraction: float | None = None
        if total is not None:
            fraction = min(max(position / total, 0.0), 1.0)
            filled = round(fraction * _BAR_WIDTH)
            parts.append(f"{fraction * 100:5.1f}%")
            parts.append("[" + "#" * filled + "-" * (_BAR_WIDTH - filled) + "]")
        if total is not None and self._position is None:
            parts.append(f"{self._amount(done)}/{self._amount(total)}")
        else:
            parts.append(self._amount(done))
        parts.append(f"{self._amount(rate, rate=True)}/s")
        if final:
            parts.append(f"in {_duration(elapsed)}")
        elif fraction is not None and 0.0 < fraction < 1.0 and elapsed > 0:
            parts.append(f"ETA {_duration(elapsed * (1.0 - fraction) / fraction)}")
        return " ".join(parts)

    def _amount(self, value: float, *, rate: bool = False) -> str:
        if self.unit == "B":
            return _scaled(value, ("B", "kB", "MB", "GB", "TB"))
        # A slow rate (trials a second) keeps a decimal rather than reading as 0; a count is whole.
        text = (
            f"{value:.1f}"
            if rate and 0 < abs(value) < 10
            else _scaled(value, ("", "k", "M", "G", "T"))
        )
        return f"{text} {self.unit}" if self.unit else text

    def _draw(self, line: str, end: str) -> None:
        # Pad over the remains of a longer previous line; \r returns to the line start.
        padding = " " * max(self._width - len(line), 0)
        self._width = len(line)
        try:
            self.stream.write(f"\r{line}{padding}{end}")
            self.stream.flush()
        except (OSError, ValueError):
            # A closed or broken terminal must not abort the work being reported on.
            self.enabled = False


def tracked(items: Iterable[T], bar: Progress, every: int = 1024) -> Iterator[T]:
    """``items`` as they are, counted on ``bar`` every ``every`` items and at the end."""
    count = 0
    for count, item in enumerate(items, 1):
        if count % every == 0:
            bar.update(count)
        yield item
    bar.update(count)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _scaled(value: float, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes[:-1]:
        if abs(value) < 1000:
            return f"{value:.0f}{suffix}" if suffix == suffixes[0] else f"{value:.1f}{suffix}"
        value /= 1000
    return f"{value:.1f}{suffixes[-1]}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def counting(bar: Progress) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback drawing on ``bar``, for a reader that learns its
    total only once it has started (the end offsets of the topics it reads)."""

    def seen(done: int, total: int) -> None:
        bar.total = total if total > 0 else None
        bar.update(done)

    return seen
