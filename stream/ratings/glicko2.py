"""Glicko-2 with one game (or one set of results) per rating period, as INVERSUS Deluxe uses it.

Sources: Glickman, "Example of the Glicko-2 system" (the update and the Illinois iteration for
volatility), and Ryan Juckett, "Adding Online Skill Ranking to INVERSUS Deluxe" (bounds after
every step, O(1) partial inactive periods from wall time, one match = one active period).

Two slips in the INVERSUS listing are not copied: the initial upper bracket of the volatility
search uses the estimated variance v (``delta^2 - phi^2 - v``, as Glickman writes it), not the
volatility, and every result is read (the listing reads the first result ``matchCount`` times).
The scale factor is 173.7178 (the listing's comment says 172.7178).

Ratings and deviations enter and leave on the public 1500 scale; bounds are given, as in
INVERSUS, on Glicko-2's internal scale.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

# CENTER and SCALE are re-exported (the rest of the project reads them from here).
from stream.ratings.glicko2_kernel import CENTER as CENTER  # noqa: PLC0414
from stream.ratings.glicko2_kernel import INV_PI_SQ_3 as _INV_PI_SQ_3
from stream.ratings.glicko2_kernel import MIN_INFORMATION as _MIN_INFORMATION
from stream.ratings.glicko2_kernel import SCALE as SCALE  # noqa: PLC0414
from stream.ratings.glicko2_kernel import Duellist, Params
from stream.ratings.kernels import glicko2_kernel
from stream.ratings.ranges import Limits, Range, check_ranges, require
from stream.ratings.skill import Rated, Result, Skill, SkillLike

# The volatility search of the compiled build when there is one (stream/ratings/kernels.py).
new_volatility = glicko2_kernel.new_volatility
_rate_one_twin = glicko2_kernel.rate_one_twin
_rate_duel_twin = glicko2_kernel.rate_duel_twin
_twin_volatility = glicko2_kernel.twin_volatility

_SECONDS_PER_DAY = 86400.0

_RATING_WHY = (
    "public 1500 +- 2606, 2.5 times the INVERSUS bounds; further out, the expected score "
    "between the two bounds rounds to exactly 1 in double precision"
)
_DEVIATION_WHY = (
    "public 1.7 to 869 points (INVERSUS: 30 to 350); a deviation above 5 lets one result move "
    "a rating by thousands of points"
)
_VOLATILITY_WHY = (
    "Glickman and INVERSUS use 0.06 (0.04 to 0.08); 0 would stop the deviation from ever "
    "growing, above 1 one period's noise is wider than the rating range"
)
_TAU_WHY = (
    "Glickman suggests 0.3 to 1.2; below 0.01 the volatility cannot move, above 10 one result "
    "throws it to its bounds"
)
_EPSILON_WHY = (
    "Glickman uses 1e-6; 1e-12 is near the resolution of doubles around ln(volatility^2), above "
    "0.01 the volatility is off by half a percent"
)


def initial(config: Glicko2Config) -> Skill:
    """An unrated player: average rating, the unrated deviation and volatility."""
    return Skill(CENTER, SCALE * config.unrated_deviation, config.unrated_volatility)


def _bounded(config: Glicko2Config, mu: float, phi: float, sigma: float) -> Skill:
    if mu < config.min_rating:
        mu = config.min_rating
    elif mu > config.max_rating:
        mu = config.max_rating
    if phi < config.min_deviation:
        phi = config.min_deviation
    elif phi > config.unrated_deviation:
        phi = config.unrated_deviation
    if sigma < config.min_volatility:
        sigma = config.min_volatility
    elif sigma > config.max_volatility:
        sigma = config.max_volatility
    return Skill(CENTER + SCALE * mu, SCALE * phi, sigma)


def inactive_periods(config: Glicko2Config, elapsed_seconds: float) -> float:
    """Rating periods of inactivity in ``elapsed_seconds``, counted in whole granularity steps."""
    if elapsed_seconds <= 0:
        return 0.0
    steps = math.floor(elapsed_seconds / (config.granularity_days * _SECONDS_PER_DAY))
    return steps * config.granularity_days / config.period_days


def apply_inactive_periods(config: Glicko2Config, skill: SkillLike, periods: float) -> Skill:
    """O(1) form of ``periods`` inactive periods: phi^2 grows by periods * sigma^2."""
    sigma = skill.volatility if skill.volatility is not None else config.unrated_volatility
    phi = skill.deviation / SCALE
    return _bounded(
        config,
        (skill.rating - CENTER) / SCALE,
        math.sqrt(phi * phi + periods * sigma * sigma),
        sigma,
    )


def decay(config: Glicko2Config, skill: SkillLike, elapsed_seconds: float) -> SkillLike:
    """Grow the deviation for the wall time since the player's last activity."""
    periods = inactive_periods(config, elapsed_seconds)
    if periods == 0.0:
        return skill
    return apply_inactive_periods(config, skill, periods)


def rate(config: Glicko2Config, skill: SkillLike, results: Sequence[Result]) -> Skill:
    """One active rating period holding ``results``; with no results, one inactive period."""
    if not results:
        return apply_inactive_periods(config, skill, 1.0)
    mu = (skill.rating - CENTER) / SCALE
    phi = skill.deviation / SCALE
    sigma = skill.volatility if skill.volatility is not None else config.unrated_volatility
    exp = math.exp
    sqrt = math.sqrt

    inv_v = 0.0
    delta_scale = 0.0
    for result in results:
        # A weighted result (a share of a team's) is a comparison whose logit is weight times
        # the rating gap: its slope is weight * g(weight * phi_j). Weight 1 is Glickman's.
        # A part-time player's result carries their share of its information and pull
        # (share 1 multiplies exactly: a whole match is Glickman's, bit for bit).
        w = result.weight
        phi_j = w * result.deviation / SCALE
        g = w / sqrt(1.0 + _INV_PI_SQ_3 * phi_j * phi_j)
        e = 1.0 / (1.0 + exp(-g * (mu - (result.rating - CENTER) / SCALE)))
        gs = g * result.share
        inv_v += gs * g * e * (1.0 - e)
        delta_scale += gs * (result.score - e)
    if inv_v < _MIN_INFORMATION:  # noqa: PLR1730 (a comparison is cheaper than max() here)
        # Results so lopsided that every expected score rounds to 0 or 1 (a composite-team
        # shift can push an opponent past the bounds): their variance is all but infinite.
        inv_v = _MIN_INFORMATION
    v = 1.0 / inv_v
    delta = v * delta_scale

    new_sigma = new_volatility(sigma, phi * phi, v, delta * delta, config.tau, config.epsilon)
    phi_star_sq = phi * phi + new_sigma * new_sigma
    new_phi = 1.0 / sqrt(1.0 / phi_star_sq + inv_v)
    return _bounded(config, mu + new_phi * new_phi * delta_scale, new_phi, new_sigma)


def rate_twin(
    config: Glicko2Config,
    skill: SkillLike,
    results: Sequence[Result],
    moved: SkillLike,
    moved_results: Sequence[Result],
) -> tuple[Skill, Skill]:
    """:func:`rate` of ``skill`` against ``results`` (bit for bit), and of its twin: ``moved``
    against ``moved_results``, the same update a small step along some parameter (the learned
    drift, stream.ratings.drift), whose difference from the first is the update's derivative.

    The twin's volatility is not searched again: it is the first's moved by one step of the
    implicit function, ``dx = -(f_twin(x) - f(x)) / f'(x)`` at the first's root ``x``, exact to
    first order in the step; the rest of the twin's update is computed in full. Two searches
    would cost twice as much and differ by their own tolerance (1e-6 in ``x``), which over a
    step of 1e-3 is noise in the derivative; this costs a few multiplications and has none.
    Where ``f'`` is not negative (tau so large that Glickman's function flattens at the root),
    or the step would be large (the move is then not small, and the first order not enough), the
    twin's volatility is searched as :func:`rate` searches it.
    """
    if not results:
        return (
            apply_inactive_periods(config, skill, 1.0),
            apply_inactive_periods(config, moved, 1.0),
        )
    unrated = config.unrated_volatility
    sigma = skill.volatility if skill.volatility is not None else unrated
    sigma_m = moved.volatility if moved.volatility is not None else unrated
    mu = (skill.rating - CENTER) / SCALE
    phi = skill.deviation / SCALE
    mu_m = (moved.rating - CENTER) / SCALE
    phi_m = moved.deviation / SCALE
    inv_v, delta_scale = _information(mu, results)
    inv_v_m, delta_scale_m = _information(mu_m, moved_results)
    v = 1.0 / inv_v
    delta = v * delta_scale
    v_m = 1.0 / inv_v_m
    delta_m = v_m * delta_scale_m
    tau = config.tau
    new_sigma = new_volatility(sigma, phi * phi, v, delta * delta, tau, config.epsilon)

    log_shift = math.log(sigma_m * sigma_m) - math.log(sigma * sigma)
    new_sigma_m = _twin_volatility(
        new_sigma, phi * phi, v, delta, phi_m * phi_m, v_m, delta_m, sigma_m, log_shift, tau,
        config.epsilon,
    )  # fmt: skip
    phi_star_sq = phi * phi + new_sigma * new_sigma
    new_phi = 1.0 / math.sqrt(1.0 / phi_star_sq + inv_v)
    phi_star_sq_m = phi_m * phi_m + new_sigma_m * new_sigma_m
    new_phi_m = 1.0 / math.sqrt(1.0 / phi_star_sq_m + inv_v_m)
    return (
        _bounded(config, mu + new_phi * new_phi * delta_scale, new_phi, new_sigma),
        _bounded(config, mu_m + new_phi_m * new_phi_m * delta_scale_m, new_phi_m, new_sigma_m),
    )


def _information(mu: float, results: Sequence[Result]) -> tuple[float, float]:
    """:func:`rate`'s sums over ``results`` for a player at ``mu``: (1 / v, delta / v), in the
    same order of operations (so :func:`rate_twin`'s first update equals it bit for bit).
    :func:`rate` keeps the loop written out: one call fewer on the published replay's hot path
    (``skillstream bench engine``)."""
    exp = math.exp
    sqrt = math.sqrt
    inv_v = 0.0
    delta_scale = 0.0
    for result in results:
        w = result.weight
        phi_j = w * result.deviation / SCALE
        g = w / sqrt(1.0 + _INV_PI_SQ_3 * phi_j * phi_j)
        e = 1.0 / (1.0 + exp(-g * (mu - (result.rating - CENTER) / SCALE)))
        gs = g * result.share
        inv_v += gs * g * e * (1.0 - e)
        delta_scale += gs * (result.score - e)
    if inv_v < _MIN_INFORMATION:  # noqa: PLR1730 (as in rate)
        inv_v = _MIN_INFORMATION
    return inv_v, delta_scale


def update_terms(skill: SkillLike, result: Result) -> tuple[float, float]:
    """What :func:`rate` expects of ``result`` for ``skill``: (expected score, slope of its
    logit per public rating point of ``skill``)."""
    w = result.weight
    phi_j = w * result.deviation / SCALE
    g = w / math.sqrt(1.0 + _INV_PI_SQ_3 * phi_j * phi_j)
    e = 1.0 / (1.0 + math.exp(-g * (skill.rating - result.rating) / SCALE))
    return e, g / SCALE


def expected_score(a: Rated, b: Rated) -> float:
    """Probability that ``a`` beats ``b``, both deviations combined: g(sqrt(phi_a^2 + phi_b^2))."""
    phi_sq = (a.deviation * a.deviation + b.deviation * b.deviation) / (SCALE * SCALE)
    gg = 1.0 / math.sqrt(1.0 + _INV_PI_SQ_3 * phi_sq)
    return 1.0 / (1.0 + math.exp(-gg * (a.rating - b.rating) / SCALE))


@dataclass(frozen=True, slots=True)
class Glicko2Config:
    """System parameters. Rating and deviation bounds are on Glicko-2's internal scale."""

    name: ClassVar[str] = "glicko2"

    tau: float = 0.5
    min_rating: float = -6.045
    max_rating: float = 6.045
    min_deviation: float = 0.175
    # Also the maximum: an inactive player never becomes less certain than a new one.
    unrated_deviation: float = 2.015
    min_volatility: float = 0.04
    max_volatility: float = 0.08
    unrated_volatility: float = 0.06
    # Inactivity: one rating period of wall time, counted in whole steps of granularity.
    period_days: float = 14.0
    granularity_days: float = 1.0
    epsilon: float = 1e-6

    RANGES: ClassVar[Mapping[str, Range]] = {
        "tau": Range(0.01, 10.0, _TAU_WHY),
        "min_rating": Range(-15.0, 15.0, _RATING_WHY),
        "max_rating": Range(-15.0, 15.0, _RATING_WHY),
        "min_deviation": Range(0.01, 5.0, _DEVIATION_WHY),
        "unrated_deviation": Range(0.01, 5.0, _DEVIATION_WHY),
        "min_volatility": Range(0.001, 1.0, _VOLATILITY_WHY),
        "max_volatility": Range(0.001, 1.0, _VOLATILITY_WHY),
        "unrated_volatility": Range(0.001, 1.0, _VOLATILITY_WHY),
        "period_days": Range(
            0.01, 3650.0, "a quarter of an hour to ten years per period; 0 would divide by zero"
        ),
        "granularity_days": Range(
            0.0001, 3650.0, "steps of nine seconds to ten years; 0 would divide by zero"
        ),
        "epsilon": Range(1e-12, 0.01, _EPSILON_WHY),
    }

    # Derived once: the parameters as the float kernel reads them (glicko2_kernel.Params).
    kernel_params: Params = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        require(
            self.max_rating - self.min_rating >= 1.0,
            "max_rating",
            "must be at least 1 above min_rating (174 public points: a narrower range leaves "
            "nothing to rank)",
        )
        require(
            self.min_deviation <= self.unrated_deviation,
            "min_deviation",
            "must not be above unrated_deviation",
        )
        require(
            self.min_volatility <= self.unrated_volatility <= self.max_volatility,
            "unrated_volatility",
            "must lie between min_volatility and max_volatility",
        )
        params = (
            self.tau,
            self.epsilon,
            self.unrated_volatility,
            self.min_rating,
            self.max_rating,
            self.min_deviation,
            self.unrated_deviation,
            self.min_volatility,
            self.max_volatility,
        )
        object.__setattr__(self, "kernel_params", params)

    # The module's pure functions double as methods, so the config is usable wherever a rating
    # algorithm is expected, without a second call on the replay's hot path.
    initial = initial
    decay = decay
    rate = rate
    rate_twin = rate_twin

    def rate_one_twin(
        self,
        rating: float,
        deviation: float,
        volatility: float | None,
        moved_rating: float,
        moved_deviation: float,
        opponent_rating: float,
        opponent_deviation: float,
        moved_opponent_rating: float,
        moved_opponent_deviation: float,
        score: float,
    ) -> tuple[float, float, float, float, float]:
        """:func:`rate_twin` of one result against one opponent, in floats
        (stream.ratings.glicko2_kernel.rate_one_twin, compiled when built)."""
        return _rate_one_twin(
            self.kernel_params,
            rating,
            deviation,
            volatility,
            moved_rating,
            moved_deviation,
            opponent_rating,
            opponent_deviation,
            moved_opponent_rating,
            moved_opponent_deviation,
            score,
        )

    def rate_duel_twin(
        self, step: float, a: Duellist, b: Duellist, score_a: float
    ) -> tuple[float, float, float, float, float, float, float, float, float, float]:
        """:meth:`rate_one_twin` for both players of a duel with their drift slopes, in one
        call (stream.ratings.glicko2_kernel.rate_duel_twin, compiled when built)."""
        return _rate_duel_twin(self.kernel_params, step, a, b, score_a)

    # The duel's evidence about the population (stream.ratings.population.evidence), in one
    # call of floats (stream.ratings.glicko2_kernel.duel_evidence, compiled when built).
    duel_evidence = staticmethod(glicko2_kernel.duel_evidence)
    expected_score = staticmethod(expected_score)
    update_terms = staticmethod(update_terms)

    @property
    def prior_deviation(self) -> float:
        """A new player's (and the largest) deviation in public points."""
        return SCALE * self.unrated_deviation

    def with_prior_deviation(self, points: float) -> Glicko2Config:
        """The same parameters with a new player's deviation set to ``points`` (public), held
        inside the accepted range and never below the minimum deviation."""
        accepted = self.RANGES["unrated_deviation"]
        phi = min(max(points / SCALE, accepted.low), accepted.high)
        return dataclasses.replace(
            self, unrated_deviation=phi, min_deviation=min(self.min_deviation, phi)
        )

    @property
    def drift_period(self) -> float:
        """Days of inactivity per rating period (what a learning mode learns of it)."""
        return self.period_days

    def with_drift_period(self, days: float) -> Glicko2Config:
        """The same parameters with ``days`` per rating period (within its accepted range)."""
        accepted = self.RANGES["period_days"]
        return dataclasses.replace(self, period_days=min(max(days, accepted.low), accepted.high))

    @property
    def decay_step_seconds(self) -> float:
        """Less inactivity than this adds nothing (one granularity step)."""
        return self.granularity_days * _SECONDS_PER_DAY

    @property
    def logistic_scale(self) -> float:
        """Rating points per unit of the logistic curve: the Glicko-2 scale factor."""
        return SCALE

    @property
    def rating_bounds(self) -> tuple[float, float]:
        """Public-scale rating bounds (what Rank Points map onto [0, 10000])."""
        return (CENTER + SCALE * self.min_rating, CENTER + SCALE * self.max_rating)

    @property
    def limits(self) -> Limits:
        """The bounds an update clamps to: rating, smallest deviation and volatility, in public
        points (the deviation) and as configured (the volatility)."""
        return Limits(
            self.rating_bounds,
            self.min_deviation * SCALE,
            (self.min_volatility, self.max_volatility),
        )
