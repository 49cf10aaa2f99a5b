"""Parameter search (stream.offline.tuning) on small simulated histories."""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream.config.modes import Modes, PendingConfig, build_mode, parse_modes
from stream.history import HistoryMatch, read_history
from stream.offline.comparison import Z_EVIDENCE
from stream.offline.evaluation import evaluate
from stream.offline.replayer import Replayer
from stream.offline.search_space import (
    LEARNED_POPULATION,
    knobs_for,
    mode_table,
    population_fixed,
)
from stream.offline.tuned_section import tuned_toml
from stream.offline.tuning import (
    LEARNED_STEP,
    Plan,
    Trial,
    TuneResult,
    planned_trials,
    score,
    tune,
)
from stream.ratings.elo import EloConfig
from stream.ratings.glicko2 import SCALE
from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.population import Population
from stream.ratings.teams import TeamStrategy
from stream.simulation import SimulationConfig, simulate, write_csv, write_jsonl

MATCHES = 3000
SKIP = 1500
# Off the defaults on purpose: a small max_gain leaves the search room to improve, and the
# temperature (not searched) must survive into the result and its TOML.
BASE_GAIN = 4.0
BASE = ModeConfig(
    "default", EloConfig(temperature=200.0, max_gain=BASE_GAIN), TeamStrategy.COMPOSITE_OPPONENT
)
# Elo's gain alone: one knob keeps these searches short and their outcome plain (the
# experience knobs, searched for every algorithm, are exercised by their own test).
GAIN_ONLY = tuple(k for k in knobs_for("elo", teams=False) if k.path == ("elo", "max_gain"))
# About 40 matches a day: the scored half spans some 40 days, enough clusters for an error.
PER_SECOND = 0.0005


def write_history(path: Path, matches: int, seed: int, matchmaking_noise: float = 600.0) -> Path:
    # Loose matchmaking by default: lopsided matches make the gain's effect clear in 1,500
    # matches.
    config = SimulationConfig(
        matches=matches,
        players=80,
        seed=seed,
        matches_per_second=PER_SECOND,
        matchmaking_noise=matchmaking_noise,
    )
    with path.open("w", newline="", encoding="utf-8") as file:
        assert write_csv(simulate(config), file) == matches
    return path


@pytest.fixture(scope="module")
def history_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_history(tmp_path_factory.mktemp("tuning") / "history.csv", MATCHES, 5)


def reader(path: Path) -> Iterator[HistoryMatch]:
    return read_history(path)


@pytest.fixture(scope="module")
def result(history_path: Path) -> TuneResult:
    seen: list[Trial] = []
    knobs = GAIN_ONLY
    out = tune(lambda: reader(history_path), BASE, Plan(SKIP), knobs, on_trial=seen.append)
    assert list(out.trials) == seen  # on_trial saw every trial, in order
    assert len(seen) <= planned_trials(knobs, Plan(SKIP))
    return out


def test_the_baseline_is_the_base_config_evaluated(result: TuneResult, history_path: Path) -> None:
    fresh = evaluate(reader(history_path), Replayer(Modes.single(BASE)), skip=SKIP)
    assert fresh.log_loss == pytest.approx(result.search_base_log_loss, rel=1e-12)
    assert result.search_matches == MATCHES - SKIP == fresh.matches
    assert result.trials[0].settings == {"elo.max_gain": BASE_GAIN}


def test_every_kept_step_is_beyond_noise(result: TuneResult) -> None:
    # On this history a larger gain predicts clearly better than 4: the search moved.
    assert result.steps
    for step in result.steps:
        assert step.knob == "elo.max_gain"
        assert step.paired.verdict == "better"
        assert step.paired.mean <= -Z_EVIDENCE * step.paired.standard_error
    assert result.steps[0].old == BASE_GAIN
    assert isinstance(result.best.algorithm, EloConfig)
    assert result.best.algorithm.max_gain == result.steps[-1].new
    assert result.search_best_log_loss < result.search_base_log_loss


def test_the_winner_scores_the_same_when_evaluated_afresh(
    result: TuneResult, history_path: Path
) -> None:
    fresh = evaluate(reader(history_path), Replayer(Modes.single(result.best)), skip=SKIP)
    assert fresh.log_loss == pytest.approx(result.search_best_log_loss, rel=1e-12)
    # Only max_gain is searched for Elo here: everything else is the base configuration.
    gain = result.steps[-1].new
    assert isinstance(gain, float)
    assert result.best.algorithm == EloConfig(temperature=200.0, max_gain=gain)
    assert result.best.teams is TeamStrategy.COMPOSITE_OPPONENT


def test_without_a_split_the_verdict_is_the_search_s_own(result: TuneResult) -> None:
    v = result.verdict
    assert not v.unseen
    assert v.base_log_loss == result.search_base_log_loss
    assert v.best_log_loss == result.search_best_log_loss
    assert v.keep_best
    assert result.kept == result.best


def test_each_configuration_is_replayed_once(result: TuneResult) -> None:
    keys = [tuple(sorted(t.settings.items())) for t in result.trials]
    assert len(keys) == len(set(keys))
    allowed = set(GAIN_ONLY[0].values) | {BASE_GAIN}
    assert {t.settings["elo.max_gain"] for t in result.trials} <= allowed


def test_candidates_replayed_side_by_side_give_the_same_search(
    result: TuneResult, history_path: Path
) -> None:
    """Two processes replaying a knob's candidates find what one process finds: the same
    trials in the same order, steps, winner and verdict."""
    seen: list[Trial] = []
    out = tune(
        lambda: reader(history_path), BASE, Plan(SKIP), GAIN_ONLY, on_trial=seen.append, jobs=2
    )
    assert list(out.trials) == seen == list(result.trials)
    assert out.steps == result.steps
    assert out.best_table == result.best_table
    assert out.verdict == result.verdict
    assert out.search_best_log_loss == result.search_best_log_loss


def test_tuning_again_from_a_settled_winner_changes_nothing(history_path: Path) -> None:
    knobs = GAIN_ONLY
    settled = tune(lambda: reader(history_path), BASE, Plan(SKIP, rounds=5), knobs)
    assert len(settled.steps) < 5  # the search stopped by itself, not at the round limit
    again = tune(lambda: reader(history_path), settled.best, Plan(SKIP, rounds=5), knobs)
    assert again.steps == ()
    assert again.best == settled.best
    assert again.search_base_log_loss == settled.search_best_log_loss


def test_the_pending_and_quit_policies_come_through_the_search_unchanged(tmp_path: Path) -> None:
    # Not searched, but part of the section to paste: a mode's own [pending] keys stay.
    path = write_history(tmp_path / "tiny.csv", 80, 5, matchmaking_noise=100.0)
    start = dataclasses.replace(BASE, name="duel", quits=QuitPolicy.NORMAL)
    pending = PendingConfig(grace_seconds=30.0, timeout_seconds=600.0)
    out = tune(lambda: reader(path), start, Plan(40), GAIN_ONLY, pending=pending)
    assert out.base_table["pending"] == {
        "grace_seconds": 30.0,
        "timeout_seconds": 600.0,
        "quit_policy": "normal",
    }
    modes = parse_modes(tomllib.loads(tuned_toml(out, "modes.duel", "h.csv", "x", "y")))
    assert modes.get("duel").quits is QuitPolicy.NORMAL
    assert modes.pending("duel") == pending
    assert modes.pending("other") == PendingConfig()


def test_a_tiny_scored_part_keeps_the_start_and_warns(tmp_path: Path) -> None:
    # 40 scored matches of evenly matched players on two days: nothing is beyond noise.
    path = write_history(tmp_path / "tiny.csv", 80, 5, matchmaking_noise=100.0)
    start = dataclasses.replace(BASE, algorithm=EloConfig(temperature=200.0, max_gain=32.0))
    out = tune(lambda: reader(path), start, Plan(40), GAIN_ONLY)
    assert out.steps == ()
    assert out.best == start
    assert out.kept == start
    assert any("has only 40 matches" in w for w in out.warnings)
    # 80 players in 80 matches: most predictions involve someone's first games.
    assert any("involve a player with fewer than 5 games" in w for w in out.warnings)
    # Noise still gives some value a lower loss, which a rule without the paired error keeps.
    assert min(t.log_loss for t in out.trials) < out.search_base_log_loss - 1e-5


def test_a_time_split_judges_the_winner_on_matches_the_search_never_saw(
    history_path: Path,
) -> None:
    matches = list(reader(history_path))
    split = matches[2000].at
    before = [m for m in matches if m.at < split]
    plan = Plan(skip=len(before) // 2, split=split)
    out = tune(lambda: reader(history_path), BASE, plan, GAIN_ONLY)
    assert out.search_matches == len(before) - len(before) // 2
    v = out.verdict
    assert v.unseen
    after = [m for m in matches if m.at >= split]
    assert v.matches == len(after)
    fresh = evaluate(reader(history_path), Replayer(Modes.single(BASE)), since=split)
    assert v.base_log_loss == pytest.approx(fresh.log_loss, rel=1e-12)
    best = evaluate(reader(history_path), Replayer(Modes.single(out.best)), since=split)
    assert v.best_log_loss == pytest.approx(best.log_loss, rel=1e-12)
    assert out.kept == (out.best if v.paired.verdict == "better" else BASE)


def test_the_team_strategy_is_searched_on_team_histories(tmp_path: Path) -> None:
    path = tmp_path / "teams.jsonl"
    config = SimulationConfig(
        matches=600, players=60, team_size=2, seed=3, matches_per_second=PER_SECOND
    )
    with path.open("w", encoding="utf-8") as file:
        write_jsonl(simulate(config), file)
    assert ("teams",) in {k.path for k in knobs_for("elo")}
    assert ("teams",) not in {k.path for k in knobs_for("elo", teams=False)}
    knobs = tuple(k for k in knobs_for("elo") if k.path == ("teams",))
    out = tune(lambda: reader(path), BASE, Plan(300, rounds=1), knobs)
    strategies = {t.settings["teams"] for t in out.trials}
    assert strategies == {s.value for s in TeamStrategy}


def test_the_size_edge_is_searched_only_where_sides_differ() -> None:
    assert ("population", "size_edge") in {k.path for k in knobs_for("glicko2", uneven=True)}
    assert ("population", "size_edge") not in {k.path for k in knobs_for("glicko2")}
    # Learning is not a choice a worker can run: the learned population is tried fixed.
    assert ("population", "window_days") not in {k.path for k in knobs_for("elo")}
    # First, so that the other knobs are tuned around the mode's own population.
    assert knobs_for("elo")[0] is LEARNED_POPULATION is knobs_for("zonestats")[0]


def test_tune_learns_the_population_and_prints_it_fixed_as_a_worker_rates_it(
    tmp_path: Path,
) -> None:
    # Pickup teams reshuffled every match: the built-in default with its population fixed
    # rates them as rosters until tune learns the mode's persistence from the history and
    # starts from it (auto: shared). (The built-in itself learns it within its first windows:
    # there the learned start is not reliably better, and tune keeps the built-in.)
    path = tmp_path / "pickup.jsonl"
    config = SimulationConfig(
        matches=1200, players=120, team_size=3, party_rate=0.0, seed=4, matches_per_second=0.002
    )
    with path.open("w", encoding="utf-8") as file:
        write_jsonl(simulate(config), file)
    fixed = Modes().default
    fixed = dataclasses.replace(
        fixed, population=dataclasses.replace(fixed.population, window_days=0.0)
    )
    assert fixed.team_rule is TeamStrategy.COMPOSITE_OPPONENT
    out = tune(lambda: reader(path), fixed, Plan(600, rounds=1), (LEARNED_POPULATION,))
    (step,) = out.steps
    assert step.knob == LEARNED_STEP and step.paired.verdict == "better"
    # A fixed population stays fixed, at what the search learned.
    assert out.best.population.window_days == 0.0
    assert out.best.population.persistence < 0.3
    assert out.best.team_rule is TeamStrategy.SHARED
    text = tuned_toml(out, "default", "pickup.jsonl", "search", "verdict")
    assert f"# step {LEARNED_STEP} as configured -> prior " in text
    assert "# population of mode '3v3', fixed: prior deviation " in text
    assert "(teams auto: shared)" in text
    assert ", drift period " in text  # Glicko-2 learns how fast its skills drift too
    # The section builds the winner again, as a modes file a worker accepts.
    printed = parse_modes(tomllib.loads(text))
    assert printed.default == dataclasses.replace(out.best, name="default")


@pytest.mark.parametrize("window_days", [1.0, 0.0])
def test_the_learned_population_is_the_tables_start_as_a_modes_file_shows_it(
    window_days: float,
) -> None:
    """A mode that learns goes on learning from the values; a fixed one keeps them."""
    given = dataclasses.replace(
        Modes().default.population, window_days=window_days, decisiveness=0.5
    )
    mode = dataclasses.replace(Modes().default, population=given)
    table = mode_table(mode, PendingConfig())
    learned = Population(250.0, 67.25, 0.9234, 1.4567)
    fixed = population_fixed(table, mode, learned)
    assert fixed["population"] == {
        "window_days": window_days,
        "size_edge": 67.2,
        "persistence": 0.923,
        "decisiveness": 1.457,
    }
    assert fixed["glicko2"]["unrated_deviation"] == round(250.0 / SCALE, 3)
    assert table["population"]["decisiveness"] == 0.5  # the given table is left alone
    # Elo has no prior deviation: its table keeps its own.
    elo = ModeConfig("e", EloConfig())
    elo_table = mode_table(elo, PendingConfig())
    assert population_fixed(elo_table, elo, learned)["elo"] == elo_table["elo"]


def test_values_a_mode_holds_are_written_as_given_not_as_learned() -> None:
    held = ("decisiveness", "debut_offset", "deviation", "drift_period")
    given = dataclasses.replace(
        Modes().default.population, decisiveness=0.6667, size_edge=12.34, hold=held
    )
    mode = dataclasses.replace(Modes().default, population=given)
    table = mode_table(mode, PendingConfig())
    learned = Population(250.0, 67.25, 0.9234, 1.4567, 5.0, -150.0)
    fixed = population_fixed(table, mode, learned)
    assert fixed["population"]["decisiveness"] == 0.6667  # held: not rounded, not learned
    assert fixed["population"]["size_edge"] == 67.2  # learned
    assert fixed["experience"] == table["experience"]
    assert fixed["glicko2"] == table["glicko2"]
    assert build_mode("default", fixed).population.hold == tuple(sorted(held))


def test_the_experience_term_is_searched_for_every_algorithm_but_zonestats() -> None:
    for algorithm in ("glicko2", "glicko1", "elo"):
        paths = {k.path for k in knobs_for(algorithm)}
        assert {("experience", "debut_offset"), ("experience", "games_scale")} <= paths
    assert not any(k.path[0] == "experience" for k in knobs_for("zonestats"))


def test_a_history_of_weaker_newcomers_tunes_a_negative_debut_offset(tmp_path: Path) -> None:
    # The simulator's newcomers start 250 points below their eventual skill: the search must
    # find that a negative offset predicts them better than none, beyond noise.
    path = tmp_path / "newcomers.csv"
    config = SimulationConfig(
        matches=3000, players=300, seed=11, matches_per_second=PER_SECOND, newcomer_deficit=400.0
    )
    with path.open("w", newline="", encoding="utf-8") as file:
        write_csv(simulate(config), file)
    knobs = tuple(k for k in knobs_for("elo") if k.path == ("experience", "debut_offset"))
    start = dataclasses.replace(BASE, algorithm=EloConfig(max_gain=32.0))
    out = tune(lambda: reader(path), start, Plan(1500, rounds=1), knobs)
    assert out.steps
    assert out.best.experience.debut_offset < 0


def test_score_counts_newcomers_and_days(history_path: Path) -> None:
    scores = score(reader(history_path), BASE, skip=0)
    assert scores.matches == MATCHES
    assert len(scores.losses) == len(scores.days) == MATCHES
    # 80 players, two per match: the first games of each are newcomers' games.
    assert 0 < scores.newcomers < MATCHES / 2
    assert len(set(scores.days)) > 30


@pytest.mark.parametrize("section", ["default", "modes.tuned"])
def test_tuned_toml_loads_and_marks_the_changes(result: TuneResult, section: str) -> None:
    text = tuned_toml(result, section, "history.csv", "the last half", "the same matches")
    modes = parse_modes(tomllib.loads(text), source="tuned.toml")
    mode = modes.default if section == "default" else modes.listed["tuned"]
    assert mode.algorithm == result.kept.algorithm
    assert mode.teams is TeamStrategy.COMPOSITE_OPPONENT
    assert text.startswith("# tuned on history.csv: the search scored 1500 matches")
    tuned = [line.split(" = ")[0] for line in text.splitlines() if line.endswith("# tuned")]
    assert tuned == ["max_gain"]
    assert sum(line.startswith("# step elo.max_gain") for line in text.splitlines()) == len(
        result.steps
    )


def test_tuned_toml_keeps_the_start_when_the_verdict_is_no_evidence(result: TuneResult) -> None:
    verdict = result.verdict
    unconvincing = type(verdict)(
        verdict.matches,
        verdict.base_log_loss,
        verdict.best_log_loss,
        type(verdict.paired)(verdict.paired.predictions, 40, -0.001, 0.001),
        unseen=True,
    )
    rejected = TuneResult(
        result.base,
        result.best,
        result.base_table,
        result.best_table,
        result.search_matches,
        result.search_base_log_loss,
        result.search_best_log_loss,
        result.steps,
        result.trials,
        unconvincing,
    )
    text = tuned_toml(rejected, "default", "h.csv", "x", "y")
    assert "the start is kept below" in text
    modes = parse_modes(tomllib.loads(text))
    assert modes.default == BASE
    assert mode_table(modes.default, modes.default_pending) == result.base_table
    assert not [line for line in text.splitlines() if line.endswith("# tuned")]
