"""Every command and option says what it does in `--help`, and `skillstream` alone shows them
(issue 45: options without help, the same help for every bench target, no usage at all)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from stream.cli.main import build_parser, main


def parsers(
    parser: argparse.ArgumentParser, path: str = "skillstream"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, f"{path} {name}")


def test_every_option_and_argument_has_help() -> None:
    missing = []
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                # Each command's one line in its parent's --help.
                missing += [f"{path} {c.dest}" for c in action._choices_actions if not c.help]
            elif not action.help and not isinstance(
                action, argparse._HelpAction | argparse._VersionAction
            ):
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def test_each_bench_target_has_its_own_options() -> None:
    bench = dict(parsers(build_parser()))
    options = {
        target: {o for a in bench[f"skillstream bench {target}"]._actions for o in a.option_strings}
        for target in ("engine", "pipeline", "cache", "recovery", "state")
    }
    assert "--rates" in options["pipeline"] and "--rates" not in options["cache"]
    assert "--matches" in options["engine"] and "--matches" not in options["pipeline"]
    assert options["state"] == {"-h", "--help"}


def test_skillstream_alone_prints_the_usage_and_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: skillstream")
    for command in ("replay", "worker", "ratings", "corrections", "crashsim"):
        assert command in err
