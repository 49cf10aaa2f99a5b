"""fast_init: a faster __init__ that must leave a frozen slotted dataclass otherwise unchanged."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.ratings.fastinit import fast_init
from stream.ratings.skill import PlayerState, Result, Skill

SENTINEL = ("shared", "default")


def make(fast: bool) -> type[Any]:
    """The same class, with and without fast_init (same name and qualname, so same repr)."""

    @dataclass(frozen=True, slots=True)
    class Point:
        x: float
        y: float
        label: str = "origin"
        tags: tuple[str, ...] = SENTINEL
        weight: float | None = None

    return fast_init(Point) if fast else Point


Fast = make(True)
Plain = make(False)


def test_fast_init_replaced_the_generated_init() -> None:
    assert Fast.__init__ is not Plain.__init__
    assert (
        Fast.__init__.__qualname__ == Plain.__init__.__qualname__ == "make.<locals>.Point.__init__"
    )
    assert Fast.__init__.__doc__ == Plain.__init__.__doc__


def test_same_fields_and_defaults() -> None:
    def describe(cls: type[Any]) -> list[tuple[str, object, bool, bool, bool]]:
        return [(f.name, f.default, f.init, f.repr, f.compare) for f in dataclasses.fields(cls)]

    assert describe(Fast) == describe(Plain)
    assert Fast.__slots__ == Plain.__slots__
    params = inspect.signature(Fast).parameters
    plain_params = inspect.signature(Plain).parameters
    assert list(params) == list(plain_params) == ["x", "y", "label", "tags", "weight"]
    for name, param in params.items():
        assert param.default == plain_params[name].default
        assert param.kind is plain_params[name].kind


def test_defaults_are_the_same_objects() -> None:
    f, p = Fast(1.0, 2.0), Plain(1.0, 2.0)
    assert (f.label, f.tags, f.weight) == ("origin", SENTINEL, None)
    assert f.tags is SENTINEL and p.tags is SENTINEL


def test_positional_and_keyword_construction() -> None:
    by_position = Fast(1.0, 2.0, "a", ("t",), 0.5)
    by_keyword = Fast(weight=0.5, tags=("t",), label="a", y=2.0, x=1.0)
    mixed = Fast(1.0, 2.0, weight=0.5, tags=("t",), label="a")
    assert by_position == by_keyword == mixed
    assert dataclasses.astuple(by_position) == dataclasses.astuple(
        Plain(1.0, 2.0, "a", ("t",), 0.5)
    )
    assert (by_position.x, by_position.y, by_position.label) == (1.0, 2.0, "a")


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1.0,), {}),  # missing y
        ((), {"y": 1.0}),  # missing x
        ((1.0, 2.0, "a", (), None, "extra"), {}),  # too many
        ((1.0, 2.0), {"z": 3.0}),  # unknown keyword
        ((1.0, 2.0), {"x": 3.0}),  # x twice
    ],
)
def test_bad_calls_raise_type_error_like_the_dataclass(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(TypeError):
        Plain(*args, **kwargs)
    with pytest.raises(TypeError):
        Fast(*args, **kwargs)


def test_equality_hash_and_repr() -> None:
    a, b = Fast(1.0, 2.0, "p"), Fast(1.0, 2.0, "p")
    assert a == b and a is not b
    assert hash(a) == hash(b) == hash(Plain(1.0, 2.0, "p"))
    assert a != Fast(1.0, 2.5, "p")
    assert repr(a) == repr(Plain(1.0, 2.0, "p"))
    assert (
        repr(a)
        == "make.<locals>.Point(x=1.0, y=2.0, label='p', tags=('shared', 'default'), weight=None)"
    )
    assert len({a, b, Fast(0.0, 0.0)}) == 2


def test_frozen_after_construction() -> None:
    a = Fast(1.0, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.y
    with pytest.raises((AttributeError, TypeError)):
        a.other = 1  # slots: no new attributes
    assert a.x == 1.0 and a.y == 2.0


def test_replace_still_works() -> None:
    a = Fast(1.0, 2.0, "p")
    moved = dataclasses.replace(a, y=3.0)
    assert moved == Fast(1.0, 3.0, "p")
    assert type(moved) is Fast


def test_real_value_types_pickle() -> None:
    state = PlayerState(1600.0, 80.0, 0.06, 4000, 12, 1.0)
    assert pickle.loads(pickle.dumps(state)) == state


@given(
    st.floats(allow_nan=False),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.one_of(st.none(), st.floats(allow_nan=False)),
)
def test_fast_and_plain_agree_on_any_values(
    x: float, y: float, label: str, w: float | None
) -> None:
    f, p = Fast(x, y, label, weight=w), Plain(x, y, label, weight=w)
    assert dataclasses.astuple(f) == dataclasses.astuple(p)
    assert repr(f) == repr(p)
    assert hash(f) == hash(p)
    assert f == Fast(x, y, label, SENTINEL, w)


def test_default_factory_is_rejected() -> None:
    @dataclass(frozen=True, slots=True)
    class WithFactory:
        x: int
        items: tuple[int, ...] = field(default_factory=tuple)

    with pytest.raises(TypeError, match=r"WithFactory\.items"):
        fast_init(WithFactory)


def test_init_false_field_is_rejected() -> None:
    @dataclass(frozen=True, slots=True)
    class Derived:
        x: int
        twice: int = field(init=False, default=0)

    with pytest.raises(TypeError, match=r"Derived\.twice"):
        fast_init(Derived)


@pytest.mark.parametrize(
    ("cls", "args"),
    [
        (Skill, (1500.0, 350.0, 0.06)),
        (Result, (1500.0, 350.0, 1.0, 0.5, 0.25)),
        (PlayerState, (1500.0, 350.0, 0.06, 10, 2, 1.5, -3.0, 40.0)),
    ],
)
def test_the_library_value_types_construct_every_field(
    cls: type[Any], args: tuple[object, ...]
) -> None:
    obj = cls(*args)
    assert dataclasses.astuple(obj) == args
    names = [f.name for f in dataclasses.fields(cls)]
    assert cls(**dict(zip(names, args, strict=True))) == obj
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, names[0], 0.0)


def test_skill_defaults() -> None:
    assert dataclasses.astuple(Skill(1400.0)) == (1400.0, 0.0, None)
    assert dataclasses.astuple(PlayerState(1.0, 2.0, None)) == (
        1.0,
        2.0,
        None,
        0,
        0,
        None,
        0.0,
        0.0,
    )
