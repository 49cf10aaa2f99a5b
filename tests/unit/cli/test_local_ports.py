"""`skillstream local up` port arguments: 0 (a free port) or a TCP port, refused otherwise."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.cli.arguments import port_or_zero
from stream.cli.main import main


@given(st.integers(min_value=-70_000, max_value=140_000))
def test_a_port_is_accepted_exactly_from_0_to_65535(port: int) -> None:
    if 0 <= port <= 65535:
        assert port_or_zero(str(port)) == port
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=str(port)):
            port_or_zero(str(port))


def test_local_up_refuses_a_port_out_of_range_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["local", "up", "--kafka-port", "70000"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    expected = "argument --kafka-port: a port is at most 65535, got 70000"
    assert err == f"skillstream local up: error: {expected}\n"
