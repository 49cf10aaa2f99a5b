"""The learned population live, in one room: evidence in, windows tracked and closed, chains
folded.

A mode that learns its population (``[population] window_days`` above 0) is rated live with
exactly the population replay gives it (stream/offline/learning.py): the population of a match
is its mode's chain (:mod:`stream.ratings.population.chain`) at the window of the match's start,
folded from the evidence of every match of the windows two before it, wherever it was homed.

How the evidence goes round (docs/decisions.md, "The learned population live"):

1. **Evidence where the result is.** When a match partition sends the ``rate`` commands of a
   result, it computes the match's evidence
   (:func:`stream.ratings.population.evidence.match_evidence`, from the snapshots, each
   player's fate and line-up: what each player partition is about to compute, and what replay
   computes) and adds it, in integers, to the window of the match's
   start (:meth:`Populations.add`). It is kept in the partition's ``populations`` record, in
   the same batch as the match entry it settles, so a crash rolls both back together.
2. **Closing.** A partition's ``until`` is the time before which every match homed there is
   settled: the lower of its joins' watermark (every start before it has been read and joined)
   and the start of its oldest unsettled match. When ``until`` passes the end of a learning
   window, the partition sends :class:`WindowClosed` to every match partition, itself
   included: its ``until`` and the evidence of the windows that ended since its previous one.
3. **Folding.** Every match partition keeps every partition's latest ``until`` and the
   evidence it heard; once the lowest ``until`` passes the end of a window, no partition can
   add to it, and the window is folded into the mode's chain. Every partition folds the same
   integers in the same order, so all hold the same chain.
4. **Rating.** A match of window ``w`` is rated once the lowest ``until`` has passed the end of
   window ``w - 2`` (:meth:`Populations.population_for`); until then it is held
   (``MatchPartition.unfolded``) and looked at again after the next fold. The ``rate``
   commands carry the population, so each player partition rates with exactly it.

On replay: a ``closed`` read again replaces the same source's same evidence (a partition that
settles the same matches again computes the same integers); an older ``until`` is ignored. A
start read after its window was closed here (published later than the lateness allows) adds its
evidence to the first window not closed, which replay does not: counted, as every late start is.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Collection, Mapping

from stream.config.modes import Modes
from stream.pipeline.matchpartition import MatchPartition
from stream.protocol import MatchEntry, PopulationRecord, StoredChain, WindowClosed
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import LEARNING_RULES, Population, PopulationConfig
from stream.ratings.population.chain import LAG, Chain
from stream.ratings.population.evidence import NONE, Evidence

__all__ = ["Populations", "settings_of"]

_SECONDS_PER_DAY = 86_400.0
# The steps of a chain a partition keeps: a match is rated with its window's population, and
# after a crash a partition may settle again matches whose windows its ``until`` had passed
# (the record reached the changelog, the entries did not), so steps are not dropped by time;
# 64 daily windows cover any redo, and a start read two months late is a late start anyway.
KEPT_STEPS = 64


def settings_of(mode: ModeConfig) -> str:
    """What a chain is learned under (a chain stored under other settings, or learned by other
    rules, starts again; a learned debut offset's evidence depends on the term's games scale)."""
    c = mode.population
    first = Chain.of(mode).initial
    shown = repr(first)
    if first.party_edge == 0.0:
        # As the key read before parties were learned: the chains stored then go on (-0.0
        # written in a modes file is the same start).
        shown = repr(dataclasses.replace(first, party_edge=0.0)).replace(", party_edge=0.0)", ")")
    settings = f"{c.window_days!r}|{c.size_edge!r}|{c.persistence!r}|{c.decisiveness!r}|{shown}"
    if first.debut_offset is not None:
        settings = f"{settings}|games scale {mode.experience.games_scale!r}"
    if c.hold:
        # Only when some value is held: the chains stored before the key existed go on.
        settings = f"{settings}|hold {','.join(c.hold)}"
    return f"{settings}|rules {LEARNING_RULES}"


def _length(config: PopulationConfig) -> float:
    return config.window_days * _SECONDS_PER_DAY


class Populations:
    """The learned populations of the match partitions a worker owns (one per worker)."""

    def __init__(self, modes: Modes, partitions: int) -> None:
        self.modes = modes
        self.partitions = partitions
        # Every learning window length a mode may have (listed modes and the default, which
        # unlisted modes take): ``until`` crossing the end of any of them sends a ``closed``.
        lengths = {_length(mode.population) for mode in (modes.default, *modes.listed.values())}
        self.lengths = sorted(length for length in lengths if length > 0)
        # Each mode's settings_of, made once (a string compared at every match settled).
        self._settings: dict[str, tuple[ModeConfig, str]] = {}

    @property
    def any_learns(self) -> bool:
        return bool(self.lengths)

    def _learning(self, mode_name: str) -> ModeConfig | None:
        try:
            mode = self.modes.get(mode_name)
        except KeyError:
            return None  # a mode the modes file no longer accepts
        return mode if mode.population.learns else None

    def chain(self, record: PopulationRecord, mode_name: str, mode: ModeConfig) -> Chain:
        """The mode's chain in ``record``; a new one for a mode seen for the first time, or
        stored under other settings (a modes file changed between deployments)."""
        known = self._settings.get(mode_name)
        if known is None or known[0] is not mode:
            known = self._settings[mode_name] = (mode, settings_of(mode))
        settings = known[1]
        stored = record.chains.get(mode_name)
        if stored is None or stored.settings != settings:
            stored = record.chains[mode_name] = StoredChain(settings, Chain.of(mode))
        return stored.chain

    def known_until(self, record: PopulationRecord) -> float | None:
        """Every match partition has settled every match that started before this (None: not
        every partition has said yet)."""
        marks = record.marks
        return min(marks.values()) if len(marks) == self.partitions else None

    def needs(self, mode_name: str, started_at: float) -> float | None:
        """The ``known_until`` a match of ``mode_name`` started at ``started_at`` waits for
        (the end of the window two before its own); None for a mode that does not learn."""
        mode = self._learning(mode_name)
        if mode is None:
            return None
        config = mode.population
        return (config.window_of(started_at) - LAG + 1) * _length(config)

    def population_for(
        self, record: PopulationRecord, mode_name: str, started_at: float
    ) -> tuple[bool, Population | None]:
        """(known, population) for a match of ``mode_name`` started at ``started_at``: (True,
        None) for a mode that does not learn (its configured values), (False, None) while its
        population is not known yet."""
        mode = self._learning(mode_name)
        if mode is None:
            return True, None
        config = mode.population
        window = config.window_of(started_at)
        until = self.known_until(record)
        if until is None or until < (window - LAG + 1) * _length(config):
            return False, None
        return True, self.chain(record, mode_name, mode).at(window)

    def window_of(self, mode_name: str, started_at: float) -> int | None:
        """The learning window of a match of ``mode_name`` started at ``started_at`` (None: a
        mode that does not learn)."""
        mode = self._learning(mode_name)
        return None if mode is None else mode.population.window_of(started_at)

    def sent(
        self, record: PopulationRecord, mode_name: str, started_at: float, source: int
    ) -> bool:
        """Whether partition ``source`` (this one) has closed the window of such a match (its
        evidence went out in a ``closed``; True for a mode that does not learn): its entry may
        go. Its own ``closed`` read back counts as well as the close it made: after a restore
        of its record from before a close, the close it sent in its previous life stands."""
        mode = self._learning(mode_name)
        if mode is None:
            return True
        config = mode.population
        end = (config.window_of(started_at) + 1) * _length(config)
        closed = max(record.until or float("-inf"), record.marks.get(source, float("-inf")))
        return end <= closed

    def may_close(self, record: PopulationRecord, until: float) -> bool:
        """Whether ``until`` would close anything (cheap: the batch's end asks every time)."""
        before = record.until
        return before is None or (
            until > before and any(until // n != before // n for n in self.lengths)
        )

    def closing(
        self,
        record: PopulationRecord,
        source: int,
        until: float,
        pending: Mapping[str, Collection[int]],
        gather: Callable[[str, int], Evidence],
    ) -> WindowClosed | None:
        """The ``closed`` to send now that every match homed here that started before
        ``until`` is settled: the first time, and whenever ``until`` passes a window's end
        (None: nothing new to say). ``pending`` names, per mode, the windows whose settled
        matches' evidence has not gone out yet; ``gather(mode, window)`` sums it and lets
        those matches go. A window this partition closed before (a start read after its window
        was closed here) goes into the first window this message closes, or waits for it."""
        if not self.may_close(record, until):
            return None
        before = record.until
        evidence: dict[str, dict[int, Evidence]] = {}
        for mode_name, windows in pending.items():
            mode = self._learning(mode_name)
            if mode is None:
                continue
            config = mode.population
            length = _length(config)
            first_open = None if before is None else config.window_of(before)
            found: dict[int, Evidence] = {}
            for window in sorted(windows):
                if (window + 1) * length > until:
                    continue
                target = window
                if first_open is not None and window < first_open:
                    if (first_open + 1) * length > until:
                        continue  # late, and the window it joins is not closed yet
                    target = first_open
                part = gather(mode_name, window)
                if part:
                    found[target] = found.get(target, NONE) + part
            if found:
                evidence[mode_name] = found
        record.until = until
        return WindowClosed(source, until, evidence)

    def track(self, partition: MatchPartition, match_id: str, entry: MatchEntry) -> None:
        """Note a match with a line-up not settled yet (its start bounds the partition's
        ``until``: :meth:`close`), or a settled one whose evidence has not gone out.

        A start read late bounds it by its order once that is known (stream.protocol.Ordered):
        its players' turns for it may come after matches of later windows, whose populations
        wait for ``until``; held at its start, the two would wait for each other. Its window
        closes without it, as for a start read after the close (module docstring)."""
        if entry.teams is None or entry.start is None:
            return
        if entry.done is None:
            if match_id not in partition.tracked:
                partition.tracked.add(match_id)
                bound = entry.start if entry.order is None else entry.order
                heapq.heappush(partition.unsettled, (bound, match_id))
            return
        if entry.evidence is None or self.sent(
            partition.populations, entry.mode, entry.start, partition.number
        ):
            return
        window = self.window_of(entry.mode, entry.start)
        if window is not None:
            partition.evidence.setdefault(entry.mode, {}).setdefault(window, set()).add(match_id)

    def close(
        self, partition: MatchPartition, entry_of: Callable[[str], MatchEntry | None]
    ) -> tuple[WindowClosed | None, list[str], int]:
        """The partition's close of the learning windows that ended (step 2 of the module
        docstring), once every match homed there that started before a window's end is
        settled (``entry_of``: the partition's match entries): the ``closed`` to send to every
        match partition (None: nothing to close yet), the settled matches kept for their
        evidence alone that may go now, and how many of those were late starts (their window
        closed here before they settled: counted, as replay does not take them)."""
        until = partition.joined
        # The oldest unsettled start can only lower ``until``: nothing to close below it.
        if until is None or not self.may_close(partition.populations, until):
            return None, [], 0
        pending = partition.unsettled
        while pending:
            start, match_id = pending[0]
            entry = entry_of(match_id)
            if entry is not None and entry.teams is not None and entry.done is None:
                if entry.order is not None and entry.order > start:
                    # Ordered since it was noted (a late start: track).
                    heapq.heapreplace(pending, (entry.order, match_id))
                    continue
                until = min(until, start)
                break
            heapq.heappop(pending)
            partition.tracked.discard(match_id)
        record = partition.populations
        before = record.until
        gathered: list[str] = []
        late = 0

        def gather(mode: str, window: int) -> Evidence:
            """The window's settled matches' evidence, summed; they may go now."""
            nonlocal late
            ids = partition.evidence.get(mode, {}).pop(window, set())
            total = NONE
            for match_id in sorted(ids):
                entry = entry_of(match_id)
                if entry is not None and entry.evidence is not None:
                    total = total + Evidence.decode(entry.evidence)
                    gathered.append(match_id)
                    if before is not None and not self._new_window(mode, entry, before):
                        late += 1
            return total

        pending_windows = {mode: list(windows) for mode, windows in partition.evidence.items()}
        closed = self.closing(record, partition.number, until, pending_windows, gather)
        if closed is not None:
            partition.populations_changed = True
        return closed, gathered, late

    def _new_window(self, mode: str, entry: MatchEntry, before: float) -> bool:
        """Whether ``entry``'s window ended after ``before`` (else it is a late start's)."""
        assert entry.start is not None
        window = self.window_of(mode, entry.start)
        first = self.window_of(mode, before)
        return window is None or first is None or window >= first

    def on_closed(self, record: PopulationRecord, closed: WindowClosed) -> float | None:
        """A partition's ``closed``: note it and fold every window every partition has closed.
        Returns the new ``known_until`` when it moved (held matches may now be rated)."""
        before = self.known_until(record)
        mark = record.marks.get(closed.source)
        if mark is None or closed.until > mark:
            record.marks[closed.source] = closed.until
        for mode_name, windows in closed.evidence.items():
            heard = record.heard.setdefault(mode_name, {})
            for window, evidence in windows.items():
                # The first a source says of a window stands: it is the whole (every match of
                # the window was settled there); one sent again after a crash may lack what
                # the partition forgot since.
                heard.setdefault(window, {}).setdefault(closed.source, evidence)
        until = self.known_until(record)
        if until is None:
            return None
        self._fold(record, until)
        return until if before is None or until > before else None

    def _fold(self, record: PopulationRecord, until: float) -> None:
        for mode_name, windows in list(record.heard.items()):
            mode = self._learning(mode_name)
            if mode is None:
                del record.heard[mode_name]
                continue
            config = mode.population
            length = _length(config)
            chain = self.chain(record, mode_name, mode)
            for window in sorted(windows):
                if (window + 1) * length > until:
                    break
                total = NONE
                for evidence in windows.pop(window).values():
                    total = total + evidence
                if chain.folded is not None and window <= chain.folded:
                    continue  # folded already: evidence read again after a restart
                chain.fold(config, window, total)
            if not windows:
                del record.heard[mode_name]
            chain.keep_last(KEPT_STEPS)
