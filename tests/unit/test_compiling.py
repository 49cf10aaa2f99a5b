"""`skillstream compile`: the kernels compiled with mypyc give the pure modules' results bit
for bit (compiled here, into a scratch directory, and compared on inputs from every corner);
a machine without a compiler is told so in one line."""

from __future__ import annotations

import importlib
import math
import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import stream.ratings
from stream.cli.main import main
from stream.compiling import CompileError, build
from stream.ratings import glicko2_kernel
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.kernels import compiled_name

BUILD = compiled_name(glicko2_kernel)
# rate_one_twin's arguments after its parameters.
Case = tuple[float, float, float | None, float, float, float, float, float, float, float]


def _can_compile() -> bool:
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return False
    return shutil.which("cc") is not None or shutil.which("gcc") is not None


@pytest.fixture
def compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The Glicko-2 kernel compiled into a scratch directory and imported from there (whatever
    build this machine's tree holds is set aside, and put back after)."""
    if not _can_compile():
        pytest.skip("no mypyc or no C compiler on this machine: nothing to compile with")
    written = build(glicko2_kernel, tmp_path)
    assert {p.parent for p in written} == {tmp_path}
    monkeypatch.setattr(stream.ratings, "__path__", [str(tmp_path), *stream.ratings.__path__])
    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if name.startswith(BUILD)}
    try:
        module = importlib.import_module(BUILD)
        assert Path(str(module.__file__)).parent == tmp_path
        yield module
    finally:
        for name in [n for n in sys.modules if n.startswith(BUILD)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _cases(n: int) -> Iterator[Case]:
    """Inputs of rate_one_twin after its parameters: ordinary duels, tiny and huge moves,
    ratings far past the bounds, deviations at both ends, no volatility."""
    rng = random.Random(20261129)
    for _ in range(n):
        rating = rng.choice([rng.uniform(1000, 2000), rng.uniform(-3000, 6000)])
        deviation = rng.choice([rng.uniform(30, 350), rng.uniform(0.5, 900)])
        move = rng.choice([0.0, rng.uniform(-1, 1), rng.uniform(-400, 400)])
        opponent = rng.choice([rng.uniform(1000, 2000), rng.uniform(-3000, 6000)])
        opponent_deviation = rng.uniform(0.5, 900)
        yield (
            rating,
            deviation,
            rng.choice([None, rng.uniform(0.001, 1.0)]),
            rating + move,
            max(deviation + move, 0.5),
            opponent,
            opponent_deviation,
            opponent - move,
            max(opponent_deviation - move, 0.5),
            rng.choice([0.0, 0.5, 1.0]),
        )


def test_the_compiled_kernel_gives_the_pure_results_bit_for_bit(compiled: ModuleType) -> None:
    # Every function of the kernel: the one-result update with its twin, the volatility search,
    # a duel's two updates with their slopes, and a duel's evidence (rounded to integers).
    assert compiled.SOURCE_SHA256  # the record the import checks against its source
    configs = [Glicko2Config(), Glicko2Config(tau=10.0), Glicko2Config(tau=0.01, epsilon=1e-12)]
    checked = 0
    for config in configs:
        params = config.kernel_params
        for case in _cases(5000):
            assert compiled.rate_one_twin(params, *case) == glicko2_kernel.rate_one_twin(
                params, *case
            ), case
            checked += 1
    rng = random.Random(7)
    for _ in range(5000):
        args = (
            rng.uniform(0.001, 1.0),
            rng.uniform(1e-4, 25.0),
            rng.uniform(1e-3, 1e6),
            rng.choice([rng.uniform(0, 4), rng.uniform(0, 1e7)]),
            rng.uniform(0.01, 10.0),
            rng.choice([1e-6, 1e-12]),
        )
        assert compiled.new_volatility(*args) == glicko2_kernel.new_volatility(*args), args
    assert checked == 15000
    for case, other in zip(_cases(3000), _cases(3001), strict=False):
        # A duel: the second player from another case, each as the other meets them.
        a = (*case[:5], case[0] + 5.0, case[3] + 5.0)
        b = (*other[:5], other[0] - 5.0, other[3] - 5.0)
        assert compiled.rate_duel_twin(params, 1e-3, a, b, case[9]) == (
            glicko2_kernel.rate_duel_twin(params, 1e-3, a, b, case[9])
        ), (a, b)
    for case in _cases(5000):
        seen = (case[0], case[1], case[5], case[6])
        moved = rng.choice([None, (case[3], case[4], case[7], case[8])])
        shares = rng.choice([None, (rng.uniform(0.0, 1.0), rng.uniform(-0.2, 1.0))])
        found = (rng.uniform(0.2, 3.0), 1e-3, 4294967296.0, seen, case[9], moved, shares)
        assert compiled.duel_evidence(*found) == glicko2_kernel.duel_evidence(*found), found
    # Exact ties: a quantised sum half-way between two integers (a scale chosen to land the
    # decisiveness's score on 2.5) rounds to the even one in both builds.
    ties = 0
    for case in _cases(2000):
        seen = (case[0], case[1], case[5], case[6])
        p = glicko2_kernel.expected(*seen)
        if not 0.0 < p < 1.0:
            continue
        logit = math.log(p / (1.0 - p))
        # The kernel's score before rounding, at decisiveness 1: (actual - sharp) * logit * scale.
        base = (case[9] - 1.0 / (1.0 + math.exp(-logit))) * logit
        scale = 2.5 / abs(base) if base else 0.0
        if not base or abs(base * scale) != 2.5:
            continue
        found = (1.0, 1e-3, scale, seen, case[9], None, None)
        assert compiled.duel_evidence(*found)[0] == glicko2_kernel.duel_evidence(*found)[0]
        assert abs(glicko2_kernel.duel_evidence(*found)[0]) == 2
        ties += 1
    assert ties > 500


def test_without_a_compiler_nothing_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CC", "no-such-cc --quiet")
    with pytest.raises(CompileError, match="no C compiler 'no-such-cc' found"):
        build(glicko2_kernel, tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert main(["compile"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "skillstream compile: error: no C compiler 'no-such-cc' found: install one (e.g. gcc)"
        " or set CC\n"
    )


def test_a_directory_it_cannot_write_is_named_in_one_line(tmp_path: Path) -> None:
    if not _can_compile():
        pytest.skip("no mypyc or no C compiler on this machine: nothing to compile with")
    # A file where the directory should be: no user, root included, can write into it.
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    with pytest.raises(CompileError, match=f"cannot write the build into {blocked}/sub: "):
        build(glicko2_kernel, blocked / "sub")
    assert blocked.read_text() == ""
