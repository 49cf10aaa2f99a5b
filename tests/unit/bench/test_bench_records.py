"""stream/bench/recordcounts.py: topic classes from the worker's settings, per-match figures, and
the target verdicts."""

from __future__ import annotations

import math

import pytest

from stream.bench.recordcounts import (
    MATCHES_PER_RAW_EVENT,
    P99_MS,
    by_class,
    control_line,
    records_lines,
    style_lines,
    target_lines,
    topic_class,
    verdict,
)
from stream.bench.topics import Log, command_kinds
from stream.config.settings import Settings

# The deployment the figures are of: its app id names the worker's own topics.
SETTINGS = Settings(app_id="rate")


def test_every_topic_of_the_deployment_has_its_class() -> None:
    classes = {topic: topic_class(topic, SETTINGS) for topic, _source in SETTINGS.named_topics()}
    assert classes == {
        "match-started": "inputs",
        "match-finished": "inputs",
        "rating-changed": "outputs",
        "skillstream-dlq": "dead letters",
        "skillstream-audit": "corrections",
        "rate-match-commands": "commands",
        "rate-player-commands": "commands",
        "rate-matches-changelog": "changelogs",
        "rate-clocks-changelog": "changelogs",
        "rate-ratings-changelog": "changelogs",
        "rate-pending-changelog": "changelogs",
        "rate-populations-changelog": "changelogs",
    }
    assert topic_class("rate-__assignor-__leader", SETTINGS) == "other"
    assert topic_class("another-app-ratings-changelog", SETTINGS) == "other"


def test_classes_sum_their_topics_and_name_what_fell_in_other() -> None:
    counts = by_class(
        {
            "match-started": Log(10, 2),
            "match-finished": Log(10, 3),
            "rate-match-commands": Log(4, 4),
            "rate-player-commands": Log(6, 1),
            "rate-ratings-changelog": Log(20, 2),
            "rate-pending-changelog": Log(30, 5),
            "rating-changed": Log(20, 2),
            "rate-__assignor-__leader": Log(0, 0),
            "stray": Log(1, 1),
        },
        SETTINGS,
    )
    assert counts.classes["inputs"] == Log(20, 5)
    assert counts.classes["commands"] == Log(10, 5)
    assert counts.classes["changelogs"] == Log(50, 7)
    assert counts.classes["outputs"] == Log(20, 2)
    assert counts.classes["dead letters"] == Log(0, 0)
    assert counts.other_topics == ("stray",)
    assert counts.worker == Log(81, 15)


def test_records_lines_divide_by_the_matches_published() -> None:
    counts = by_class({"rating-changed": Log(20, 4), "rate-match-commands": Log(5, 5)}, SETTINGS)
    lines = records_lines(counts, 10)
    outputs = next(line for line in lines if line.split()[0] == "outputs")
    assert outputs.split()[1:] == ["20", "4", "2.00", "0.40"]
    total = next(line for line in lines if "total, worker" in line)
    assert total.split()[2:] == ["25", "9", "2.50", "0.90"]
    assert not any("other" in line for line in lines)
    assert not any("rate-match-commands" in line for line in lines)  # a class of one topic


def test_a_class_of_several_topics_shows_each_topic_that_wrote() -> None:
    counts = by_class(
        {
            "rate-ratings-changelog": Log(20, 2),
            "rate-pending-changelog": Log(30, 5),
            "rate-clocks-changelog": Log(0, 0),
        },
        SETTINGS,
    )
    lines = records_lines(counts, 10)
    at = next(i for i, line in enumerate(lines) if line.split()[0] == "changelogs")
    assert lines[at].split()[1:] == ["50", "7", "5.00", "0.70"]
    assert [line.split()[:3] for line in lines[at + 1 : at + 3]] == [
        ["rate-pending-changelog", "30", "5"],
        ["rate-ratings-changelog", "20", "2"],
    ]
    assert not any("clocks" in line for line in lines)


@pytest.mark.parametrize(
    ("value", "at_least", "expected"),
    [
        (MATCHES_PER_RAW_EVENT, True, "met"),
        (0.0499, True, "not met"),
        (P99_MS, False, "met"),
        (150.1, False, "not met"),
        (None, True, "not measured"),
        (math.nan, False, "not measured"),
    ],
)
def test_verdicts(value: float | None, at_least: bool, expected: str) -> None:
    target = MATCHES_PER_RAW_EVENT if at_least else P99_MS
    assert verdict(value, target, at_least=at_least) == expected


def test_target_lines_show_each_figure_beside_its_verdict() -> None:
    ratio, p99 = target_lines(0.0125, 2.5, 180.0, "2 s matches")[1:]
    assert "0.0125" in ratio and ": not met;" in ratio and "2.50 ms" in ratio
    assert "2 s matches: 180.0 ms" in p99 and p99.endswith(": not met")
    missing = target_lines(None, None, None, "matches that last")
    assert missing[1].count("not measured") == 1 and missing[2].endswith("not measured")


def test_target_lines_compare_with_the_naive_app_when_it_ran() -> None:
    lines = target_lines(0.02, 1.0, 120.0, "2 s matches", 0.018)
    assert "the naive Faust app, same raw loop: 0.0180; skillstream above it: met" in lines[2]
    below = target_lines(0.015, 1.0, 120.0, "2 s matches", 0.018)
    assert below[2].endswith("skillstream above it: not met")
    assert len(target_lines(0.02, 1.0, 120.0, "2 s matches")) == 3


def test_target_lines_place_the_target_and_the_worker_against_faust_s_floor() -> None:
    lines = target_lines(0.022, 0.57, 120.0, "2 s matches", 0.04, 0.088)
    assert lines[3] == (
        "    Faust's floor (an agent doing nothing with both events), same raw loop: 0.0880;"
        " the target is 57% of it, skillstream 25%"
    )
    assert lines[4].startswith("    p99 latency")
    no_ratio = target_lines(None, None, None, "matches that last", None, 0.1)
    assert no_ratio[2].endswith("the target is 50% of it, skillstream -")
    assert len(target_lines(0.02, 1.0, 120.0, "2 s matches", 0.04, None)) == 4


def test_control_line_counts_the_protocol_s_commands_per_second_and_per_partition() -> None:
    commands = Log(500, 100, kinds={"tick": 80, "progress": 640, "wm": 160, "join": 40})
    line = control_line(commands, 20.0, 4)
    assert line == (
        "    control: 44.0 commands/s (tick 4.0, rep 0.0, prep 0.0, view 0.0, gwm 0.0,"
        " progress 32.0, wm 8.0, awm 0.0);"
        " 11.00 per partition, 2.750 per partition squared; command records 25.0/s"
    )


def test_command_kinds_reads_a_packed_record_and_names_what_it_cannot_read() -> None:
    assert command_kinds(b'[["tick",1.0],["awm",2,3.5],["join","m","p","r",1.0,0]]') == [
        "tick",
        "awm",
        "join",
    ]
    assert command_kinds(b'[["tick",1.0],7,[]]') == ["tick", "?", "?"]
    assert command_kinds(b"{}") == ["?"]
    assert command_kinds(None) == ["?"]


def test_style_lines_put_each_style_s_p99_beside_the_start_at_the_start_s() -> None:
    lines = style_lines(0.0135, 160.0, [("both at the end", 240.0), ("instant", 480.0)])
    assert lines[0] == "  targets (issue 47):"
    assert lines[1].endswith("0.0135 (target >= 0.027): not met")
    assert lines[2] == (
        "    p99 both at the end: 240.0 ms = 1.50x the start at the start's 160.0 ms"
        " (target <= 1.5x): met"
    )
    assert lines[3].startswith("    p99 instant: 480.0 ms = 3.00x") and lines[3].endswith(
        ": not met"
    )
    unmeasured = style_lines(None, None, [("instant", 480.0)])
    assert unmeasured[1].endswith("not measured") and unmeasured[2].endswith("not measured")
