"""Writes rating-changed results to the cache so that it never shows older state over newer.

Kafka is the source of truth and delivers at least once, possibly after newer messages (a
replay, a rebalance, two workers during a handover). So each write is conditional, decided on
the server by one Lua script: a player's hash, history and the mode's sorted sets change only if
the incoming version is strictly higher than the stored one. Writing the same or an older
state again therefore changes nothing, which makes every write, and every retry, idempotent.

The same script keeps the seasons' boards (an event of a later season archives the current
boards as the final standings of theirs; a late one of the season just ended still reaches its
final standings during a grace period in event time; any other of an earlier season leaves
every board alone)
and takes players whose last match is older than the inactivity limit off the current boards,
a few per write, in event time (docs/seasons.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson
import redis.asyncio as aioredis

from stream.cache.codec import encode_fields, encode_float
from stream.cache.entry import MAX_COUNT, CachedRating, Correction, entry_problem
from stream.cache.history import encode_history
from stream.cache.keys import DEFAULT_LAYOUT, KeyLayout
from stream.cache.population import POPULATION_SCRIPT, encode_population_args
from stream.config.modes import Modes
from stream.ratings.population import Population

__all__ = ["SCRIPT_VERSION", "WRITE_SCRIPT", "CacheWriter", "Retraction", "WriteResult"]

# Bump on any change to the script's behaviour. It is part of the script text, so a new version
# gets a new SHA and never runs as an old one cached on the server.
SCRIPT_VERSION = 7

# Entries per script call at most. A script runs alone on the server: 50 entries take about
# 1.3 ms on Valkey here, which a matchmaker's read may wait behind, while one call for many
# entries spares redis-py's per-call work (docs/benchmarks.md, "The cache feed in one call").
CALL_ENTRIES = 50

# One call writes several players of one mode, in order.
# KEYS: 1 by-rating, 2 by-rank-points, 3 by-conservative, 4 by-last-played, 5 season,
#       6 seasons, 7 clock (KeyLayout.mode_keys); then per entry i (from 0) 8 + 2i the player's
#       hash, 9 + 2i the player's history (KeyLayout.player_keys).
# ARGV: 1 past seasons kept, 2 history length, 3 inactivity in ms (0: never leave the boards),
#       4 how past seasons' keys are named (KeyLayout.past_boards_argument: a JSON array of the
#       head before the season's number and the three boards' tails); then per entry i, 5 + i:
#       one JSON array of strings [version, rating score, rank-points score, conservative
#       score, player id, season ('' when the event has none), event time in ms, the end of
#       the grace in ms (the next season's start plus the grace; 0: none), [(version, element,
#       match key) triples of history in ascending version, the entry's own last; the match key
#       ('"match_id":<id>,' as the element spells it) only for a re-rate's correction, which
#       takes the place of its match's element: '' otherwise], [the hash's field/value
#       pairs (codec.encode_fields, version among them)]]. One argument per entry: redis-py's
#       work grows with the arguments, and numbers stay text so that Lua's tonumber and Redis's
#       strtod read them exactly as before (cjson would round them to 14 digits).
# Returns how many entries were applied.
# Versions are compared as Lua numbers (doubles): exact up to 2^53 changes per player. A stored
# version beyond MAX_COUNT was written by a forged record before the writer refused them: it is
# replaced, or the key could never change again.
# Past seasons' keys are not in KEYS (their number is only known here); they carry the same
# hash tag, so on Redis Cluster they live in the slot of the declared keys.
WRITE_SCRIPT = f"""-- skillstream rating cache writer, script version {SCRIPT_VERSION}
local kept = tonumber(ARGV[1])
local length = tonumber(ARGV[2])
local inactive = tonumber(ARGV[3])
local past_boards = cjson.decode(ARGV[4])
local past_head = past_boards[1]

local function at_of(element)
  return tonumber(string.match(element, '"at_ms":(%-?%d+)')) or 0
end

-- A re-rate's correction: it takes the place of its match's element (a change it replaces, whose
-- rating it keeps as replaced_rating, or the mark of a retraction it undoes) and goes where
-- its event time puts it, newest first. Rare (a cut-over), so the list is rewritten whole.
local function place(history, element, key)
  local kept = {{}}
  for _, item in ipairs(redis.call('LRANGE', history, 0, -1)) do
    if string.find(item, key, 1, true) then
      local old = string.match(item, '"rating":([^,}}]+)')
      if old and not string.find(item, '"retracted":', 1, true) then
        element = string.sub(element, 1, -2) .. ',"replaced_rating":' .. old .. '}}'
      end
    else
      kept[#kept + 1] = item
    end
  end
  local at = at_of(element)
  local out = {{}}
  for _, item in ipairs(kept) do
    if element and at >= at_of(item) then
      out[#out + 1] = element
      element = nil
    end
    out[#out + 1] = item
  end
  if element then
    out[#out + 1] = element
  end
  redis.call('DEL', history)
  redis.call('RPUSH', history, unpack(out))
end

local function write(hash, history, e)
  local floor = 0
  local stored = redis.call('HGET', hash, 'version')
  if stored then
    local current = tonumber(stored)
    if current == nil then
      error('skillstream: stored version is not a number in ' .. hash)
    end
    if current <= {MAX_COUNT} then
      if tonumber(e[1]) <= current then
        return 0
      end
      floor = current
    end
  end
  redis.call('HSET', hash, unpack(e[10]))
  if length > 0 then
    -- Only versions above the stored one: a redelivered change is never listed twice.
    local listed = e[9]
    for i = 1, #listed, 3 do
      if tonumber(listed[i]) > floor then
        if listed[i + 2] == '' then
          redis.call('LPUSH', history, listed[i + 1])
        else
          place(history, listed[i + 1], listed[i + 2])
        end
      end
    end
    redis.call('LTRIM', history, 0, length - 1)
  end
  -- The clock first: the grace below is judged by the newest event time, this one's included.
  local now = tonumber(e[7])
  local clock = tonumber(redis.call('GET', KEYS[7]) or '0')
  if now > clock then
    redis.call('SET', KEYS[7], e[7])
    clock = now
  end
  local player = e[5]
  local boarded = true
  if e[6] ~= '' then
    local season = tonumber(e[6])
    local current = tonumber(redis.call('GET', KEYS[5]) or '-1')
    if season < current then
      -- A late event of a past season: no current board. The season just ended takes it on
      -- its final standings, as if it had come before the boundary, until the grace is over
      -- (and only if they were archived: a season the cache never saw gets no standings now).
      boarded = false
      if season == current - 1 and clock < tonumber(e[8])
          and redis.call('ZSCORE', KEYS[6], season) then
        for i = 1, 3 do
          redis.call('ZADD', past_head .. season .. past_boards[i + 1], e[i + 1], player)
        end
      end
    elseif season > current then
      if current >= 0 then
        for i = 1, 3 do
          if redis.call('EXISTS', KEYS[i]) == 1 then
            redis.call('RENAME', KEYS[i], past_head .. current .. past_boards[i + 1])
          end
        end
        redis.call('DEL', KEYS[4])
        redis.call('ZADD', KEYS[6], current, current)
        local extra = redis.call('ZCARD', KEYS[6]) - kept
        if extra > 0 then
          for _, old in ipairs(redis.call('ZRANGE', KEYS[6], 0, extra - 1)) do
            for i = 1, 3 do
              redis.call('DEL', past_head .. old .. past_boards[i + 1])
            end
          end
          redis.call('ZREMRANGEBYRANK', KEYS[6], 0, extra - 1)
        end
      end
      redis.call('SET', KEYS[5], season)
    end
  end
  if boarded then
    redis.call('ZADD', KEYS[1], e[2], player)
    redis.call('ZADD', KEYS[2], e[3], player)
    redis.call('ZADD', KEYS[3], e[4], player)
    redis.call('ZADD', KEYS[4], e[7], player)
  end
  if inactive > 0 then
    -- A few at a time: every write may evict, and no more leave than arrived.
    local cutoff = '(' .. string.format('%d', clock - inactive)
    local gone = redis.call('ZRANGE', KEYS[4], '-inf', cutoff, 'BYSCORE', 'LIMIT', 0, 16)
    for _, id in ipairs(gone) do
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZREM', KEYS[2], id)
      redis.call('ZREM', KEYS[3], id)
      redis.call('ZREM', KEYS[4], id)
    end
  end
  return 1
end

local applied = 0
for i = 0, #ARGV - 5 do
  applied = applied + write(KEYS[8 + 2 * i], KEYS[9 + 2 * i], cjson.decode(ARGV[5 + i]))
end
return applied
"""


@dataclass(frozen=True, slots=True)
class Retraction:
    """A re-rate's word that ``matches`` no longer count for a player (rating-retracted)."""

    mode: str
    player_id: str
    version: int
    matches: tuple[str, ...]
    correction: Correction


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one ``write`` did: every input entry is counted once, as applied or as stale.

    ``stale`` counts entries that changed nothing: an equal or newer version was already
    cached, or a newer version of the same player came in the same batch.
    """

    applied: int
    stale: int


# A re-rate's removal of a player left without any rating (stream/corrections/handover.py):
# KEYS 1-7 the mode's keys (KeyLayout.mode_keys: the current boards, season, seasons, clock),
# 8 the player's hash, 9 their history; ARGV 1 the removal's version, 2 the player id, 3 how
# past seasons' keys are named (KeyLayout.past_boards_argument). Only a cached version below
# the removal's is removed: a later change stays.
# The archived seasons' standings lose them too: a re-rate that leaves a player no rating
# leaves them none in any season (and an erased id must leave no trace).
REMOVE_SCRIPT = """-- skillstream rating cache removal, script version 2
local stored = redis.call('HGET', KEYS[8], 'version')
if stored and tonumber(stored) ~= nil and tonumber(stored) >= tonumber(ARGV[1]) then
  return 0
end
for i = 1, 4 do
  redis.call('ZREM', KEYS[i], ARGV[2])
end
local past_boards = cjson.decode(ARGV[3])
for _, season in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
  for i = 2, 4 do
    redis.call('ZREM', past_boards[1] .. season .. past_boards[i], ARGV[2])
  end
end
redis.call('DEL', KEYS[8], KEYS[9])
return 1
"""


# A re-rate's retraction of matches that no longer count for a player (voided, or rated under a
# pseudonym; stream/corrections/handover.py): KEYS 1 the player's history; ARGV 1 the
# retraction's version, 2 its mark (the correction as JSON), 3... the matches' keys as the
# elements spell them (match_key). Each element of those matches below the retraction's version
# is marked ``retracted`` in place: the readers leave it out of the history and `ratings
# explain` names it voided, and a later generation's change of the match replaces the mark
# (WRITE_SCRIPT's place). Idempotent: a marked element is not marked again.
RETRACT_SCRIPT = """-- skillstream rating cache retraction, script version 1
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local marked = 0
for index, item in ipairs(items) do
  for i = 3, #ARGV do
    if string.find(item, ARGV[i], 1, true) and not string.find(item, '"retracted":', 1, true)
        and tonumber(string.match(item, '^{"version":(%d+)')) < tonumber(ARGV[1]) then
      redis.call('LSET', KEYS[1], index - 1,
        string.sub(item, 1, -2) .. ',"retracted":' .. ARGV[2] .. '}')
      marked = marked + 1
      break
    end
  end
end
return marked
"""


class CacheWriter:
    """Applies batches of ratings to the cache; used by the worker that consumes rating-changed.

    ``conservative_k`` sets the conservative board's score (rating - k * deviation). Every
    writer of one cache must use the same k; after changing it, entries keep their old score
    until their player's next change (rebuild the cache from Kafka to re-score everyone).
    ``history_length``: how many rating changes each player's history keeps (0: none).
    ``seasons_kept``: how many past seasons' final standings are kept (older ones are deleted).
    ``inactive_seconds``: a player whose last match is this much older (event time) than the
    mode's newest leaves the current boards until their next match (0: never).
    ``modes`` (their season schedules) and ``season_grace_seconds``: a late event of the season
    just ended reaches its final standings while the mode's newest event time is less than
    this much past the new season's start (0, or no ``modes``: never).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        layout: KeyLayout = DEFAULT_LAYOUT,
        conservative_k: float = 3.0,
        *,
        history_length: int = 20,
        seasons_kept: int = 4,
        inactive_seconds: float = 0.0,
        modes: Modes | None = None,
        season_grace_seconds: float = 600.0,
    ) -> None:
        if not math.isfinite(conservative_k) or conservative_k < 0:
            raise ValueError(f"conservative_k must be finite and >= 0, got {conservative_k!r}")
        if history_length < 0 or seasons_kept < 1:
            raise ValueError(
                f"history_length must be >= 0 and seasons_kept >= 1, got {history_length!r} "
                f"and {seasons_kept!r}"
            )
        if not math.isfinite(inactive_seconds) or inactive_seconds < 0:
            raise ValueError(f"inactive_seconds must be finite and >= 0, got {inactive_seconds!r}")
        if not math.isfinite(season_grace_seconds) or season_grace_seconds < 0:
            raise ValueError(
                f"season_grace_seconds must be finite and >= 0, got {season_grace_seconds!r}"
            )
        self.redis = redis
        self.layout = layout
        self.conservative_k = conservative_k
        self.history_length = history_length
        self.seasons_kept = seasons_kept
        self.inactive_ms = round(inactive_seconds * 1000)
        self.modes = modes
        self.season_grace_seconds = season_grace_seconds
        self._script = redis.register_script(WRITE_SCRIPT)
        self._population = redis.register_script(POPULATION_SCRIPT)
        self._remove = redis.register_script(REMOVE_SCRIPT)
        self._retract = redis.register_script(RETRACT_SCRIPT)

    async def remove(self, removals: Sequence[tuple[str, str, int]]) -> int:
        """Remove each (mode, player id, version) a re-rate left without any rating: their hash,
        history and places on the current boards and the archived seasons' standings, unless
        the cache holds a version at or above the removal's.
        Returns how many were removed. Idempotent; redis errors propagate (retry the batch);
        ValueError for an id KeyLayout refuses, before anything is sent."""
        if not removals:
            return 0
        calls = []
        for mode, player, version in removals:
            keys = [*self.layout.mode_keys(mode), *self.layout.player_keys(mode, player)]
            calls.append((keys, [str(version), player, self.layout.past_boards_argument(mode)]))
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await self._remove(keys=keys, args=args, client=pipe)
            replies = await pipe.execute()
        return sum(int(reply) for reply in replies)

    async def retract(self, retractions: Sequence[Retraction]) -> int:
        """Mark, in each player's history, the matches a re-rate retracted (RETRACT_SCRIPT).
        Returns how many elements were marked. Idempotent; redis errors propagate (retry the
        batch); ValueError for an id KeyLayout refuses, before anything is sent."""
        calls = []
        for r in retractions:
            if not r.matches:
                continue
            history = self.layout.history(r.mode, r.player_id)
            keys = [f'"match_id":{orjson.dumps(m).decode()},' for m in r.matches]
            mark = orjson.dumps(r.correction.to_json()).decode()
            calls.append(([history], [str(r.version), mark, *keys]))
        if not calls:
            return 0
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await self._retract(keys=keys, args=args, client=pipe)
            replies = await pipe.execute()
        return sum(int(reply) for reply in replies)

    async def write(
        self,
        ratings: Sequence[CachedRating],
        populations: Mapping[str, tuple[int, Population]] | None = None,
    ) -> WriteResult:
        """Cache ``ratings``, each only if it is newer than what the cache holds, and each
        learning mode's ``populations`` (mode: (event time in ms, population)), each only if
        its time is later than the cached one's (stream/cache/population.py).

        Of several entries for one (mode, player) only the highest version is written (the
        first of equal versions), or the highest of each season when they span several, so a
        season's final standings hold the player's last state of it; the others still reach
        the player's history, in version order, with it. One script call writes up to
        :data:`CALL_ENTRIES` entries of one mode, in order; all calls go in one
        non-transactional pipeline: one round trip, plus redis-py's SCRIPT EXISTS check, which
        loads the script after a server restart or SCRIPT FLUSH.

        Duplicates and replays: an entry whose version is not above the cached one is counted
        stale and changes nothing, so redelivered or out-of-order batches are harmless.

        Failure: redis exceptions (ConnectionError, TimeoutError, ResponseError, ...)
        propagate. Some entries may have been applied before the failure; the caller retries
        the whole batch, which is safe because applying an entry twice equals applying it once.
        ValueError, before anything is sent, for an unknown player's defaults, a value no engine
        produces (non-finite or beyond the bounds of stream/cache/entry.py), or an id KeyLayout
        refuses.
        """
        # Each player's entries by version, the first of equal versions kept.
        versions: dict[tuple[str, str], dict[int, CachedRating]] = {}
        for entry in ratings:
            self.check(entry)
            versions.setdefault((entry.mode, entry.player_id), {}).setdefault(entry.version, entry)
        populations = populations or {}
        if not versions and not populations:
            return WriteResult(applied=0, stale=0)
        # Keys and arguments first: a bad id raises before a pipeline exists.
        by_mode: dict[str, tuple[list[str], list[bytes]]] = {}
        for by_version in versions.values():
            ordered = [by_version[v] for v in sorted(by_version)]
            for run in _season_runs(ordered):
                entry = run[-1]
                keys, args = by_mode.setdefault(entry.mode, ([], []))
                keys += self.layout.player_keys(entry.mode, entry.player_id)
                args.append(self._entry(entry, run))
        async with self.redis.pipeline(transaction=False) as pipe:
            for mode, (keys, args) in by_mode.items():
                shared = [
                    str(self.seasons_kept),
                    str(self.history_length),
                    str(self.inactive_ms),
                    self.layout.past_boards_argument(mode),
                ]
                mode_keys = list(self.layout.mode_keys(mode))
                for first in range(0, len(args), CALL_ENTRIES):
                    await self._script(
                        keys=[*mode_keys, *keys[2 * first : 2 * (first + CALL_ENTRIES)]],
                        args=[*shared, *args[first : first + CALL_ENTRIES]],
                        client=pipe,
                    )
            calls = len(pipe.command_stack)
            for mode, (at_ms, population) in populations.items():
                await self._population(
                    keys=[self.layout.population(mode)],
                    args=encode_population_args(at_ms, population),
                    client=pipe,
                )
            replies = await pipe.execute()
        # One reply per call, the entries' first (the scripts are loaded outside the pipeline).
        applied = sum(int(reply) for reply in replies[:calls])
        return WriteResult(applied=applied, stale=len(ratings) - applied)

    def check(self, entry: CachedRating) -> None:
        """ValueError if ``entry`` cannot be cached (what ``write`` refuses before sending)."""
        if entry.unknown or entry.version < 1:
            raise ValueError(
                "only real rating changes can be cached (version >= 1, not an unknown player's "
                f"defaults); "
                f"got version {entry.version} of {entry.player_id!r} in {entry.mode!r}"
            )
        problem = entry_problem(entry)
        if problem is not None:
            raise ValueError(f"{problem} ({entry.player_id!r} in {entry.mode!r})")
        self.layout.player_keys(entry.mode, entry.player_id)

    def _entry(self, entry: CachedRating, ordered: Sequence[CachedRating]) -> bytes:
        """The script's argument for ``entry``, ``ordered`` its batch's versions (its own
        last): one JSON array of strings."""
        listed = ordered[-self.history_length :] if self.history_length else []
        history: list[str] = []
        for change in listed:
            history += (str(change.version), encode_history(change), match_key(change))
        return orjson.dumps(
            [
                str(entry.version),
                encode_float(entry.rating),
                str(entry.rank_points),
                encode_float(entry.conservative(self.conservative_k)),
                entry.player_id,
                "" if entry.season is None else str(entry.season),
                str(entry.updated_at_ms),
                str(self._grace_end_ms(entry)),
                history,
                encode_fields(entry),
            ]
        )

    def _grace_end_ms(self, entry: CachedRating) -> int:
        """Until when (event time, ms) a late ``entry`` reaches its season's final standings:
        the next season's start plus the grace; 0 without a grace, a schedule or a next season."""
        if self.modes is None or self.season_grace_seconds == 0 or entry.season is None:
            return 0
        try:
            seasons = self.modes.get(entry.mode).seasons
            if seasons is None:
                return 0
            return round((seasons.start_of(entry.season + 1) + self.season_grace_seconds) * 1000)
        except (KeyError, ValueError):
            # A mode the modes file refuses, or a season with no successor: no grace to give.
            return 0


def match_key(change: CachedRating) -> str:
    """How a history element spells ``change``'s match (``"match_id":"m-1",``), for a re-rate's
    correction, which replaces its match's element; '' for any other change, pushed at the head
    (a re-rate's change that corrects nothing has no element to replace: the handover marks
    every change of a match published before, a retracted one included, as a correction)."""
    if change.correction is None or change.match_id is None:
        return ""
    return f'"match_id":{orjson.dumps(change.match_id).decode()},'


def _season_runs(ordered: list[CachedRating]) -> list[list[CachedRating]]:
    """``ordered`` cut where the season changes: one write per season, in version order."""
    runs: list[list[CachedRating]] = []
    for entry in ordered:
        if runs and runs[-1][-1].season == entry.season:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs
