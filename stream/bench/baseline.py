"""Yardsticks for replay speed: plain Python loops over the same Glicko-2 formulas.

No engine, no dataclasses, no modes: read the CSV, apply inactivity and one-game Glicko-2 to
both players, keep tuples in a dict. Two of them: ``textbook_loop_replay`` writes Glickman's
steps as the small functions his paper names (g, E, v, delta, f), the way such a loop is
usually written; ``plain_loop_replay`` is the same loop hand-tuned into two functions.
`skillstream bench engine` times both beside the real replay on the same file and checks that
all three reach the same ratings.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from pathlib import Path

SCALE = 173.7178
TAU = 0.5
EPS = 1e-6
DAY = 86400.0
PERIOD_DAYS = 14.0
MIN_MU, MAX_MU = -6.045, 6.045
MIN_PHI, MAX_PHI = 0.175, 2.015
MIN_SIGMA, MAX_SIGMA = 0.04, 0.08


def _volatility(sigma: float, phi_sq: float, v: float, delta_sq: float) -> float:
    a = math.log(sigma * sigma)
    tau_sq = TAU * TAU

    def f(x: float) -> float:
        ex = math.exp(x)
        t = phi_sq + v + ex
        return ex * (delta_sq - t) / (2.0 * t * t) - (x - a) / tau_sq

    big_a = a
    if delta_sq > phi_sq + v:
        big_b = math.log(delta_sq - phi_sq - v)
    else:
        k = 1.0
        while f(a - k * TAU) < 0.0:
            k += 1.0
        big_b = a - k * TAU
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPS:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0.0:
            big_a, f_a = big_b, f_b
        else:
            f_a *= 0.5
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def _update(
    mu: float, phi: float, sigma: float, mu_j: float, phi_j: float, s: float
) -> tuple[float, float, float]:
    g = 1.0 / math.sqrt(1.0 + 3.0 * phi_j * phi_j / (math.pi * math.pi))
    e = 1.0 / (1.0 + math.exp(-g * (mu - mu_j)))
    inv_v = g * g * e * (1.0 - e)
    v = 1.0 / inv_v
    delta = v * g * (s - e)
    new_sigma = _volatility(sigma, phi * phi, v, delta * delta)
    new_phi = 1.0 / math.sqrt(1.0 / (phi * phi + new_sigma * new_sigma) + inv_v)
    new_mu = mu + new_phi * new_phi * g * (s - e)
    return (
        min(max(new_mu, MIN_MU), MAX_MU),
        min(max(new_phi, MIN_PHI), MAX_PHI),
        min(max(new_sigma, MIN_SIGMA), MAX_SIGMA),
    )


def _decayed(state: tuple[float, float, float, float], at: float) -> tuple[float, float, float]:
    mu, phi, sigma, last = state
    if at > last:
        periods = math.floor((at - last) / DAY) / PERIOD_DAYS
        if periods:
            phi = min(max(math.sqrt(phi * phi + periods * sigma * sigma), MIN_PHI), MAX_PHI)
    return mu, phi, sigma


def plain_loop_replay(path: Path) -> dict[str, tuple[float, float, float]]:
    """Final (rating, deviation, volatility) on the public scale for a 1v1 CSV history."""
    states: dict[str, tuple[float, float, float, float]] = {}
    fresh = (0.0, MAX_PHI, 0.06, math.inf)  # never played: no inactivity
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        i_at, i_a, i_b, i_s = (
            header.index(c) for c in ("played_at", "player_a", "player_b", "score_a")
        )
        for row in reader:
            at = dt.datetime.fromisoformat(row[i_at]).timestamp()
            a, b, s = row[i_a], row[i_b], float(row[i_s])
            mu_a, phi_a, sig_a = _decayed(states.get(a, fresh), at)
            mu_b, phi_b, sig_b = _decayed(states.get(b, fresh), at)
            states[a] = (*_update(mu_a, phi_a, sig_a, mu_b, phi_b, s), at)
            states[b] = (*_update(mu_b, phi_b, sig_b, mu_a, phi_a, 1.0 - s), at)
    return {
        p: (1500.0 + SCALE * mu, SCALE * phi, sigma) for p, (mu, phi, sigma, _) in states.items()
    }


# --- the textbook loop -------------------------------------------------------------------


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi**2 / math.pi**2)


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _f(x: float, delta: float, phi: float, v: float, a: float) -> float:
    ex = math.exp(x)
    return ex * (delta**2 - phi**2 - v - ex) / (2.0 * (phi**2 + v + ex) ** 2) - (x - a) / TAU**2


def _sigma_prime(sigma: float, delta: float, phi: float, v: float) -> float:
    a = math.log(sigma**2)
    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while _f(a - k * TAU, delta, phi, v, a) < 0:
            k += 1
        big_b = a - k * TAU
    f_a = _f(big_a, delta, phi, v, a)
    f_b = _f(big_b, delta, phi, v, a)
    while abs(big_b - big_a) > EPS:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = _f(big_c, delta, phi, v, a)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _glicko2_game(
    player: tuple[float, float, float], opponent: tuple[float, float, float], s: float
) -> tuple[float, float, float]:
    mu, phi, sigma = player
    mu_j, phi_j, _ = opponent
    e = _e(mu, mu_j, phi_j)
    v = 1.0 / (_g(phi_j) ** 2 * e * (1.0 - e))
    delta = v * _g(phi_j) * (s - e)
    sigma_p = _sigma_prime(sigma, delta, phi, v)
    phi_star = math.sqrt(phi**2 + sigma_p**2)
    phi_p = 1.0 / math.sqrt(1.0 / phi_star**2 + 1.0 / v)
    mu_p = mu + phi_p**2 * _g(phi_j) * (s - e)
    return (
        _clamp(mu_p, MIN_MU, MAX_MU),
        _clamp(phi_p, MIN_PHI, MAX_PHI),
        _clamp(sigma_p, MIN_SIGMA, MAX_SIGMA),
    )


def _inactive(player: tuple[float, float, float], days: int) -> tuple[float, float, float]:
    mu, phi, sigma = player
    phi = math.sqrt(phi**2 + days / PERIOD_DAYS * sigma**2)
    return mu, _clamp(phi, MIN_PHI, MAX_PHI), sigma


def textbook_loop_replay(path: Path) -> dict[str, tuple[float, float, float]]:
    """Final (rating, deviation, volatility) on the public scale for a 1v1 CSV history."""
    players: dict[str, tuple[float, float, float]] = {}
    last_seen: dict[str, float] = {}
    with path.open(newline="") as f:
        rows = csv.DictReader(f)
        for row in rows:
            at = dt.datetime.fromisoformat(row["played_at"]).timestamp()
            a, b, s = row["player_a"], row["player_b"], float(row["score_a"])
            for p in (a, b):
                if p not in players:
                    players[p] = (0.0, MAX_PHI, 0.06)
                elif at > last_seen[p]:
                    days = int((at - last_seen[p]) // DAY)
                    if days:
                        players[p] = _inactive(players[p], days)
            pa, pb = players[a], players[b]
            players[a] = _glicko2_game(pa, pb, s)
            players[b] = _glicko2_game(pb, pa, 1.0 - s)
            last_seen[a] = last_seen[b] = at
    return {p: (1500.0 + SCALE * mu, SCALE * phi, sig) for p, (mu, phi, sig) in players.items()}
