"""Glicko-2's arithmetic on plain floats: the volatility search, a one-result update with its
drift twin, a duel's two updates and its evidence, the hot paths of every Glicko-2 replay.

Plain floats in and out, no objects, nothing imported but functions of :mod:`math`, so that
the module compiles with mypyc as it is (``make compiled``, stream/compiling.py): the
compiled build computes the same operations in the same order in C doubles, bit for bit the
pure module's results (a test compiles it and holds it to that), several times faster. Without
a compiler nothing changes but the speed: stream.ratings.glicko2 uses this module as it is.
"""

from __future__ import annotations

from math import exp, log, pi, sqrt
from typing import Final

SCALE: Final = 173.7178
CENTER: Final = 1500.0
INV_PI_SQ_3: Final = 3.0 / (pi * pi)
# Hard caps on the volatility search's steps, whatever the inputs: with accepted parameters
# the bracket needs at most tau / 2 + 1 steps and the Illinois method converges in about 10.
MAX_BRACKET_STEPS: Final = 64
MAX_ILLINOIS_STEPS: Final = 100
# The largest step in ln(sigma^2) rate_twin takes by the implicit function (a factor 1.65 in
# the volatility); beyond it the twin's volatility is searched.
MAX_TWIN_STEP: Final = 1.0
# Least information (1 / v) a rating period may carry: keeps v and delta^2 finite.
MIN_INFORMATION: Final = 1e-12

# A configuration as :func:`rate_one_twin` reads it (Glicko2Config.kernel_params): tau,
# epsilon, the unrated volatility, then the bounds on the internal scale: rating, deviation
# (the largest is the unrated deviation), volatility.
Params = tuple[float, float, float, float, float, float, float, float, float]
# A duellist as :func:`rate_duel_twin` reads them: their rating, deviation and volatility at
# the match, the same moved a step along the log drift (rating, deviation), and their rating
# as the other meets them (the experience offsets' difference applied), unmoved and moved.
Duellist = tuple[float, float, float | None, float, float, float, float]
# A duel as its first player meets the second: (their rating, their deviation, the second's
# rating as the first meets them, the second's deviation).
Seen = tuple[float, float, float, float]


def new_volatility(
    sigma: float, phi_sq: float, v: float, delta_sq: float, tau: float, epsilon: float
) -> float:
    """Glickman's step 5: solve f(x) = 0 for x = ln(sigma'^2) by the Illinois method, where
    f(x) = e^x (delta^2 - phi^2 - v - e^x) / (2 (phi^2 + v + e^x)^2) - (x - a) / tau^2.

    f is written out at each use rather than called: this loop is the replay's hot spot.
    """
    a = log(sigma * sigma)
    tau_sq = tau * tau
    base = phi_sq + v

    big_a = a
    ex = sigma * sigma
    t = base + ex
    f_a = ex * (delta_sq - t) / (2.0 * t * t)  # (x - a) is 0 at x = a
    if delta_sq > base:
        big_b = log(delta_sq - base)
        ex = delta_sq - base
        t = base + ex
        f_b = ex * (delta_sq - t) / (2.0 * t * t) - (big_b - a) / tau_sq
    else:
        k = 1.0
        # f(a - k tau) >= k / tau - 1/2, so this ends by k = tau / 2 + 1; the cap is a backstop.
        for _ in range(MAX_BRACKET_STEPS):
            big_b = a - k * tau
            ex = exp(big_b)
            t = base + ex
            f_b = ex * (delta_sq - t) / (2.0 * t * t) - (big_b - a) / tau_sq
            if f_b >= 0.0:
                break
            k += 1.0
    for _ in range(MAX_ILLINOIS_STEPS):
        if abs(big_b - big_a) <= epsilon or f_b == f_a:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        ex = exp(big_c)
        t = base + ex
        f_c = ex * (delta_sq - t) / (2.0 * t * t) - (big_c - a) / tau_sq
        if f_c * f_b <= 0.0:
            big_a = big_b
            f_a = f_b
        else:
            f_a *= 0.5
        big_b = big_c
        f_b = f_c
    return exp(big_a / 2.0)


def rate_one_twin(
    params: Params,
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
    """``rate_twin`` (stream.ratings.glicko2) of one result, in floats: the player scores
    ``score`` against one opponent, the twin (``moved_*``, the same volatility) against the
    opponent moved; ``params``: :data:`Params`. Returns (rating, deviation, volatility, twin
    rating, twin deviation), bit for bit what ``rate_twin`` gives (a test holds it to that): the
    same operations in the same order. Two of its terms vanish exactly here: a weight of 1
    (``1.0 * x == x``) and the twin's log-volatility shift (``log(s) - log(s) == 0.0``)."""
    tau, epsilon, unrated, lo_r, hi_r, lo_d, hi_d, lo_v, hi_v = params
    sigma = volatility if volatility is not None else unrated
    mu = (rating - CENTER) / SCALE
    phi = deviation / SCALE
    mu_m = (moved_rating - CENTER) / SCALE
    phi_m = moved_deviation / SCALE
    phi_m_sq = phi_m * phi_m
    # _information() of one result of weight 1, for the player and for the twin.
    phi_j = opponent_deviation / SCALE
    g = 1.0 / sqrt(1.0 + INV_PI_SQ_3 * phi_j * phi_j)
    e = 1.0 / (1.0 + exp(-g * (mu - (opponent_rating - CENTER) / SCALE)))
    inv_v = g * g * e * (1.0 - e)
    delta_scale = g * (score - e)
    if inv_v < MIN_INFORMATION:  # noqa: PLR1730 (as in rate)
        inv_v = MIN_INFORMATION
    phi_j = moved_opponent_deviation / SCALE
    g = 1.0 / sqrt(1.0 + INV_PI_SQ_3 * phi_j * phi_j)
    e = 1.0 / (1.0 + exp(-g * (mu_m - (moved_opponent_rating - CENTER) / SCALE)))
    inv_v_m = g * g * e * (1.0 - e)
    delta_scale_m = g * (score - e)
    if inv_v_m < MIN_INFORMATION:  # noqa: PLR1730 (as in rate)
        inv_v_m = MIN_INFORMATION
    v = 1.0 / inv_v
    delta = v * delta_scale
    v_m = 1.0 / inv_v_m
    delta_m = v_m * delta_scale_m
    phi_sq = phi * phi
    new_sigma = new_volatility(sigma, phi_sq, v, delta * delta, tau, epsilon)
    new_sigma_m = twin_volatility(
        new_sigma, phi_sq, v, delta, phi_m_sq, v_m, delta_m, sigma, 0.0, tau, epsilon
    )
    new_phi = 1.0 / sqrt(1.0 / (phi_sq + new_sigma * new_sigma) + inv_v)
    new_phi_m = 1.0 / sqrt(1.0 / (phi_m_sq + new_sigma_m * new_sigma_m) + inv_v_m)
    # _bounded() written out for both (the twin's volatility is not returned).
    new_mu = mu + new_phi * new_phi * delta_scale
    new_mu_m = mu_m + new_phi_m * new_phi_m * delta_scale_m
    new_mu = lo_r if new_mu < lo_r else hi_r if new_mu > hi_r else new_mu
    new_mu_m = lo_r if new_mu_m < lo_r else hi_r if new_mu_m > hi_r else new_mu_m
    new_phi = lo_d if new_phi < lo_d else hi_d if new_phi > hi_d else new_phi
    new_phi_m = lo_d if new_phi_m < lo_d else hi_d if new_phi_m > hi_d else new_phi_m
    new_sigma = lo_v if new_sigma < lo_v else hi_v if new_sigma > hi_v else new_sigma
    return (
        CENTER + SCALE * new_mu,
        SCALE * new_phi,
        new_sigma,
        CENTER + SCALE * new_mu_m,
        SCALE * new_phi_m,
    )


def rate_duel_twin(
    params: Params, step: float, a: Duellist, b: Duellist, score_a: float
) -> tuple[float, float, float, float, float, float, float, float, float, float]:
    """Both players of a duel (:data:`Duellist` each), each by :func:`rate_one_twin` against
    the other as met, the first scoring ``score_a``. Returns, for the first player then the
    second, the new rating, deviation and volatility and the update's drift slopes
    (stream.ratings.drift.slopes_between in floats, ``step`` the drift's): one call for the
    whole duel, the replay's hot path."""
    a_rating, a_deviation, a_volatility, a_moved, a_moved_deviation, a_met, a_moved_met = a
    b_rating, b_deviation, b_volatility, b_moved, b_moved_deviation, b_met, b_moved_met = b
    rating, deviation, volatility, twin_rating, twin_deviation = rate_one_twin(
        params, a_rating, a_deviation, a_volatility, a_moved, a_moved_deviation,
        b_met, b_deviation, b_moved_met, b_moved_deviation, score_a,
    )  # fmt: skip
    b_new, b_new_deviation, b_new_volatility, b_twin, b_twin_deviation = rate_one_twin(
        params, b_rating, b_deviation, b_volatility, b_moved, b_moved_deviation,
        a_met, a_deviation, a_moved_met, a_moved_deviation, 1.0 - score_a,
    )  # fmt: skip
    return (
        rating,
        deviation,
        volatility,
        (twin_rating - rating) / step,
        (twin_deviation * twin_deviation - deviation * deviation) / step,
        b_new,
        b_new_deviation,
        b_new_volatility,
        (b_twin - b_new) / step,
        (b_twin_deviation * b_twin_deviation - b_new_deviation * b_new_deviation) / step,
    )


def expected(rating: float, deviation: float, other: float, other_deviation: float) -> float:
    """stream.ratings.glicko2.expected_score in floats: the probability that a player at
    ``rating`` beats one at ``other``, both deviations combined (the same operations)."""
    phi_sq = (deviation * deviation + other_deviation * other_deviation) / (SCALE * SCALE)
    gg = 1.0 / sqrt(1.0 + INV_PI_SQ_3 * phi_sq)
    return 1.0 / (1.0 + exp(-gg * (rating - other) / SCALE))


def duel_evidence(
    decisiveness: float,
    drift_step: float,
    scale: float,
    seen: Seen,
    actual: float,
    moved: Seen | None,
    shares: tuple[float, float] | None,
) -> tuple[int, int, int, int, int, int]:
    """What a duel's prediction says about its mode's population, quantised (``scale`` units
    per unit, rounded half to even): the decisiveness's score and information, then the
    drift's and the debut offset's (stream.ratings.population.evidence, its duel branch).
    The first player meets the second as ``seen`` (:data:`Seen`) and scores ``actual``;
    ``moved``: both as the match is played ``drift_step`` further along the log drift;
    ``shares``: each moved by their share of one more point of debut offset (None: not asked
    for). A certain prediction says nothing: zeros."""
    own, own_deviation, met, met_deviation = seen
    p = expected(own, own_deviation, met, met_deviation)
    if not 0.0 < p < 1.0:
        return (0, 0, 0, 0, 0, 0)
    logit = log(p / (1.0 - p))
    sharp = 1.0 / (1.0 + exp(-decisiveness * logit))
    drift_score = drift_information = offset_score = offset_information = 0
    if moved is not None:
        p_more = expected(moved[0], moved[1], moved[2], moved[3])
        if 0.0 < p_more < 1.0:
            slope = decisiveness * (log(p_more / (1.0 - p_more)) - logit) / drift_step
            drift_score = round((actual - sharp) * slope * scale)
            drift_information = round(sharp * (1.0 - sharp) * slope * slope * scale)
    if shares is not None:
        p_more = expected(own + shares[0], own_deviation, met + shares[1], met_deviation)
        if 0.0 < p_more < 1.0:
            slope = decisiveness * (log(p_more / (1.0 - p_more)) - logit) / 1.0
            offset_score = round((actual - sharp) * slope * scale)
            offset_information = round(sharp * (1.0 - sharp) * slope * slope * scale)
    return (
        round((actual - sharp) * logit * scale),
        round(sharp * (1.0 - sharp) * logit * logit * scale),
        drift_score,
        drift_information,
        offset_score,
        offset_information,
    )


def twin_volatility(
    new_sigma: float,
    phi_sq: float,
    v: float,
    delta: float,
    phi_m_sq: float,
    v_m: float,
    delta_m: float,
    sigma_m: float,
    log_shift: float,
    tau: float,
    epsilon: float,
) -> float:
    """The twin's new volatility (``rate_twin``, stream.ratings.glicko2, says why): the
    player's new volatility ``new_sigma`` (the root of Glickman's f from ``phi_sq``, ``v`` and
    ``delta``) moved by one step of the implicit function to the twin's f (``phi_m_sq``,
    ``v_m``, ``delta_m``, and ``log_shift``: ln(sigma_m^2) - ln(sigma^2), 0 when the twin's
    volatility ``sigma_m`` is the player's); searched from ``sigma_m`` when the step would be
    large or f' is not negative at the root."""
    ex = new_sigma * new_sigma
    excess = delta * delta - phi_sq - v  # delta^2 - phi^2 - v of f
    t = phi_sq + v + ex
    excess_m = delta_m * delta_m - phi_m_sq - v_m
    t_m = phi_m_sq + v_m + ex
    # f' at the root: d/dx of e^x (excess - e^x) / (2 t^2), less 1 / tau^2.
    f_x = ex * ((excess - 2.0 * ex) * t - 2.0 * ex * (excess - ex)) / (2.0 * t * t * t)
    f_x -= 1.0 / (tau * tau)
    dx = MAX_TWIN_STEP + 1.0
    if f_x < 0.0:
        shift = ex * (excess_m - ex) / (2.0 * t_m * t_m) - ex * (excess - ex) / (2.0 * t * t)
        shift += log_shift / (tau * tau)
        dx = -shift / f_x
    if -MAX_TWIN_STEP <= dx <= MAX_TWIN_STEP:
        return new_sigma * exp(0.5 * dx)
    return new_volatility(sigma_m, phi_m_sq, v_m, delta_m * delta_m, tau, epsilon)
