"""The rating-changed event carries what a matchmaker needs from the experience term."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from jsonschema import Draft202012Validator

from stream.cache.entry import CachedRating
from stream.config.modes import Modes
from stream.ratingchanged import rating_changed
from stream.ratings.experience import ExperienceConfig
from stream.ratings.explain import Explanation
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState

AT = 1_767_323_045.25
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[3] / "stream/schemas/rating-changed.schema.json").read_text()
)
TERM = ExperienceConfig(debut_offset=-300.0, games_scale=8.0, provisional_games=5)


def event(mode: ModeConfig, games: int) -> dict[str, object]:
    produced = rating_changed(
        player_id="p1",
        mode=mode,
        match_id="m-9",
        outcome="win",
        before=PlayerState(1500.0, 104.0, 0.06, 0, games - 1, AT - 60.0),
        after=PlayerState(1530.0, 100.0, 0.06, 24, games, AT),
        version=games,
        expected_score=0.5,
        at=AT,
        # Every term present, so the schema check below covers each.
        why=Explanation(1.0, 0.4, 60.0, (1490.0, 120.0), 130.0, -20.0, "high", "a test"),
    )
    decoded: dict[str, object] = orjson.loads(orjson.dumps(produced))
    return decoded


@pytest.mark.parametrize("games", [1, 4, 5, 40])
def test_effective_rating_and_provisional_follow_the_games(games: int) -> None:
    found = event(ModeConfig("m", experience=TERM), games)
    assert found["effective_rating"] == 1530.0 + TERM.offset(games)
    assert found["provisional"] is (games < 5)
    assert Draft202012Validator(SCHEMA).is_valid(found)


def test_without_the_term_the_effective_rating_is_the_rating() -> None:
    found = event(ModeConfig("m"), 1)
    assert found["effective_rating"] == found["rating"] == 1530.0


def test_the_built_in_mode_flags_a_debutant_and_lowers_their_effective_rating() -> None:
    found = event(Modes().get("m"), 1)
    assert found["provisional"] is True
    assert isinstance(found["effective_rating"], float) and found["effective_rating"] < 1530.0


def test_the_cached_entry_gives_the_same_effective_skill_as_the_event() -> None:
    mode = ModeConfig("m", experience=TERM)
    found = event(mode, 2)
    entry = CachedRating.from_rating_changed(found)
    assert entry.effective_skill(mode.experience).rating == found["effective_rating"]
    assert entry.unsettled(mode.experience) is found["provisional"] is True
    unknown = CachedRating.unknown_default("m", "q", PlayerState(1500.0, 104.0, 0.06))
    assert unknown.unsettled(mode.experience)
    assert unknown.effective_skill(mode.experience).rating == 1200.0


def test_the_season_is_there_only_when_the_mode_has_seasons() -> None:
    plain = event(ModeConfig("m"), 3)
    assert "season" not in plain
    schedule = SeasonsConfig(starts=(AT - 10.0,), period_days=1.0)
    found = event(ModeConfig("m", seasons=schedule), 3)
    assert found["season"] == 1
    assert Draft202012Validator(SCHEMA).is_valid(found)
    later = SeasonsConfig(starts=(AT - 3 * 86_400.0 - 10.0,), period_days=1.0)
    assert event(ModeConfig("m", seasons=later), 3)["season"] == 4


def test_the_cache_takes_the_season_and_outcome_and_refuses_a_forged_season() -> None:
    schedule = SeasonsConfig(starts=(AT - 10.0,))
    found = event(ModeConfig("m", seasons=schedule), 3)
    entry = CachedRating.from_rating_changed(found)
    assert (entry.season, entry.outcome) == (1, "win")
    assert CachedRating.from_rating_changed(event(ModeConfig("m"), 3)).season is None
    for forged in (-1, "1", 1.5, True, 10**12):
        with pytest.raises(ValueError, match="rating-changed field 'season'"):
            CachedRating.from_rating_changed({**found, "season": forged})
