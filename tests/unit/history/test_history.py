"""Streaming history and seed readers: formats, exact error texts, robustness."""

from __future__ import annotations

import io
import os
import sys
import tracemalloc
from pathlib import Path
from typing import IO

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.history import (
    HistoryError,
    HistoryMatch,
    SeedRating,
    read_history,
    read_seed_ratings,
    source,
)
from stream.ratings.skill import PlayerStats

T = 1767323045.0  # 2026-01-02T03:04:05Z
EMPTY: frozenset[str] = frozenset()


def write(tmp_path: Path, text: str | bytes, name: str = "history.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def read_all(path: Path) -> list[HistoryMatch]:
    return list(read_history(path))


def error_of(path: Path) -> str:
    with pytest.raises(HistoryError) as caught:
        read_all(path)
    return str(caught.value)


# --- CSV ---------------------------------------------------------------------------------------


def test_csv_basic_rows_and_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "played_at,player_a,player_b,score_a\n"
        "2026-01-02T03:04:05Z,alice,bob,1\n"
        "2026-01-02T03:04:06Z,bob,carol,0\n"
        "\n"
        "2026-01-02T03:04:07Z,carol,alice,0.5\n",
    )
    assert read_all(path) == [
        HistoryMatch(2, "row-2", None, T, (("alice",), ("bob",)), (0, 1), None, EMPTY),
        HistoryMatch(3, "row-3", None, T + 1, (("bob",), ("carol",)), (1, 0), None, EMPTY),
        HistoryMatch(5, "row-5", None, T + 2, (("carol",), ("alice",)), (0, 0), None, EMPTY),
    ]


@pytest.mark.parametrize(
    ("score", "ranks"),
    [("1", (0, 1)), ("1.0", (0, 1)), ("0.5", (0, 0)), (".5", (0, 0)), ("0", (1, 0)),
     ("0.0", (1, 0)), ("1.00", (0, 1)), (" 0.50", (0, 0))],
)  # fmt: skip
def test_csv_score_spellings(tmp_path: Path, score: str, ranks: tuple[int, int]) -> None:
    path = write(tmp_path, f"played_at,player_a,player_b,score_a\n1767323045000,a,b,{score}\n")
    assert read_all(path)[0].ranks == ranks


def test_csv_mode_column_any_order_and_times(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "\ufeffScore_A, mode ,player_b,played_at,player_a\n"  # BOM, case and spaces in header
        "1,ranked,bob,2026-01-02T03:04:05,alice\n"  # naive: UTC
        '0.5,,"b, ob",2026-01-02T04:04:05+01:00,alice\n'  # empty mode, quoted comma
        "0,casual,bob,1767323045250,alice\n",  # epoch milliseconds
    )
    matches = read_all(path)
    assert [(m.row, m.mode, m.at, m.teams, m.ranks) for m in matches] == [
        (2, "ranked", T, (("alice",), ("bob",)), (0, 1)),
        (3, None, T, (("alice",), ("b, ob",)), (0, 0)),
        (4, "casual", T + 0.25, (("alice",), ("bob",)), (1, 0)),
    ]


def test_csv_crlf_and_multiline_quoted_field_keep_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        b"played_at,player_a,player_b,score_a\r\n"
        b'1767323045000,"al\r\nice",bob,1\r\n'
        b"1767323045000,bob,carol,1\r\n"
        b"1767323045000,bob,bob,1\r\n",
    )
    with pytest.raises(HistoryError) as caught:
        for _ in read_history(path):
            pass
    assert str(caught.value) == f"{path} line 5: player_a and player_b are the same player 'bob'"
    assert caught.value.line == 5
    assert caught.value.path == str(path)
    assert caught.value.reason == "player_a and player_b are the same player 'bob'"


def test_csv_yields_rows_before_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "played_at,player_a,player_b,score_a\n1767323045000,a,b,1\n1767323045000,a,b,2\n",
    )
    matches = read_history(path)
    assert next(matches).row == 2
    with pytest.raises(HistoryError, match=r"line 3: score_a must be 1, 0\.5 or 0, got '2'"):
        next(matches)


HEADER = "played_at,player_a,player_b,score_a\n"
ROW = HEADER + "2026-01-02T03:04:05Z,a,b,"
FIELDS = "expected 4 fields (played_at,player_a,player_b,score_a), got "
WHEN = "played_at must be an ISO-8601 time (e.g. 2026-01-02T03:04:05Z) or integer epoch "
NAMES = "the header must name played_at,player_a,player_b,score_a (mode is optional)"
EXPECTED = "expected played_at,player_a,player_b,score_a and optionally mode"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (ROW + "2\n", "line 2: score_a must be 1, 0.5 or 0, got '2'"),
        (ROW + "win\n", "line 2: score_a must be 1, 0.5 or 0, got 'win'"),
        (ROW + "nan\n", "line 2: score_a must be 1, 0.5 or 0, got 'nan'"),
        (HEADER + "2026-01-02T03:04:05Z,a,b\n", "line 2: " + FIELDS + "3"),
        (ROW + "1,x\n", "line 2: " + FIELDS + "5"),
        (HEADER + "yesterday,a,b,1\n", "line 2: " + WHEN + "milliseconds, got 'yesterday'"),
        (HEADER + ",a,b,1\n", "line 2: " + WHEN + "milliseconds, got ''"),
        (
            HEADER + "1767323045,a,b,1\n",
            "line 2: played_at 1767323045 is before March 1973 as epoch milliseconds "
            "(epoch seconds? multiply by 1000)",
        ),
        (
            HEADER + "99999999999999999,a,b,1\n",
            "line 2: played_at 99999999999999999 is after the year 9999",
        ),
        (
            HEADER + "1969-07-20T20:17:00Z,a,b,1\n",
            "line 2: played_at is before 1970: '1969-07-20T20:17:00Z'",
        ),
        (
            HEADER + "\u00b2\u00b2,a,b,1\n",
            "line 2: played_at must be ISO-8601 or epoch milliseconds, got '\u00b2\u00b2'",
        ),
        (HEADER + "1767323045000,,b,1\n", "line 2: player_a is empty"),
        (HEADER + "1767323045000,a,,1\n", "line 2: player_b is empty"),
        (HEADER + "1767323045000,a,a,1\n", "line 2: player_a and player_b are the same player 'a'"),
        (
            HEADER + f"1767323045000,a,{'b' * 129},1\n",
            "line 2: player_b is longer than 128 characters",
        ),
        (
            f"played_at,player_a,player_b,score_a,mode\n1767323045000,a,b,1,{'m' * 129}\n",
            "line 2: mode is longer than 128 characters",
        ),
        (
            "played_at,player_a,player_b\n1767323045000,a,b\n",
            f"line 1: missing column score_a; {NAMES}",
        ),
        ("played_at,player_a,score_a\n", f"line 1: missing column player_b; {NAMES}"),
        ("played_at,player_a\n", f"line 1: missing columns player_b, score_a; {NAMES}"),
        (HEADER[:-1] + ",map,server\n", f"line 1: unknown columns 'map', 'server'; {EXPECTED}"),
        (HEADER[:-1] + ",score_a\n", "line 1: column 'score_a' appears twice"),
        (
            "2026-01-02T03:04:05Z,a,b,1\n",
            "line 1: expected a CSV header played_at,player_a,player_b,score_a "
            "(and optionally mode), got '2026-01-02T03:04:05Z,a,b,1'",
        ),
        (
            "\n\nfoo,played_at,player_a,player_b,score_a\n",
            f"line 3: unknown column 'foo'; {EXPECTED}",
        ),
        (HEADER + '1767323045000,"a,b,1\n' + "x\n" * 3, "line 2: " + FIELDS + "2"),
    ],
)
def test_csv_errors(tmp_path: Path, text: str, reason: str) -> None:
    path = write(tmp_path, text)
    assert error_of(path) == f"{path} {reason}"


def test_csv_unclosed_quote_reports_the_row_start(tmp_path: Path) -> None:
    # The quote swallows the rest of the file until the csv field-size limit stops it.
    path = write(tmp_path, HEADER + "1767323045000,a,b,1\n" + '1767323045000,"a' + "x" * 200_000)
    assert error_of(path) == f"{path} line 3: bad CSV: field larger than field limit (131072)"


def test_csv_invalid_utf8_names_the_exact_line(tmp_path: Path) -> None:
    rows = "".join(f"1767323045000,a{i},b{i},1\n" for i in range(5000))
    data = (HEADER + rows).encode() + b"1767323045000,caf\xe9,b,1\n"
    path = write(tmp_path, data)
    assert error_of(path) == f"{path} line 5002: not UTF-8 text (byte 0xe9)"


def test_empty_files(tmp_path: Path) -> None:
    for content in ("", "\n  \n", "\ufeff"):
        path = write(tmp_path, content)
        assert error_of(path) == (
            f"{path}: file is empty (expected a CSV with the header "
            "played_at,player_a,player_b,score_a or JSON lines of match-finished events)"
        )


def test_blank_and_whitespace_lines_are_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, "\n" * 300 + HEADER + "  \n\t\n1767323045000,a,b,1\n \n")
    assert [m.row for m in read_all(path)] == [304]


def test_header_only_csv_has_no_matches(tmp_path: Path) -> None:
    assert read_all(write(tmp_path, HEADER)) == []


def test_missing_file_and_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    assert error_of(missing) == f"{missing}: cannot open: No such file or directory"
    assert error_of(tmp_path) == f"{tmp_path}: cannot open: Is a directory"


# --- JSON lines --------------------------------------------------------------------------------


def event(**fields: object) -> str:
    base: dict[str, object] = {
        "match_id": "m1",
        "mode": "2v2",
        "finished_at": "2026-01-02T03:04:05Z",
        "teams": [["a", "b"], ["c", "d"]],
        "ranks": [1, 0],
    }
    base.update(fields)
    return orjson.dumps(base).decode()


def test_jsonl(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "\n"
        + event()
        + "\n\n"
        + event(match_id="m2", finished_at=1767323046000, quitters=["a"],
                stats={"a": {"score": 3, "seconds": 60}})
        + "\r\n",
        "history.jsonl",
    )  # fmt: skip
    first, second = read_all(path)
    assert first == HistoryMatch(2, "m1", "2v2", T, (("a", "b"), ("c", "d")), (1, 0), None, EMPTY)
    assert second.row == 4
    assert second.match_id == "m2"
    assert second.at == T + 1
    assert second.quitters == frozenset({"a"})
    assert second.stats is not None
    assert dict(second.stats) == {"a": PlayerStats(3.0, 60.0)}


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        ([event(), '{"match_id":'], "line 2: not valid JSON: "),
        (
            [event(teams=None)],
            "line 1: teams: required in a history (there is no match-started event)",
        ),
        ([event(ranks=[0])], "line 1: ranks: expected one rank per team (2), got 1"),
        (
            [event(finished_at="2026-01-02T03:04:05")],
            "line 1: finished_at: time '2026-01-02T03:04:05' has no zone; "
            "add Z or an offset such as +01:00",
        ),
        ([event(), "[1]"], "line 2: expected a JSON object, got a list"),
        ([event(), "played_at,player_a,player_b,score_a"], "line 2: not valid JSON: "),
        (
            [event(teams=[["a"], ["a"]], ranks=[0, 1])],
            "line 1: teams[1][0]: player 'a' is also in teams[0]",
        ),
    ],
)
def test_jsonl_errors(tmp_path: Path, lines: list[str], reason: str) -> None:
    path = write(tmp_path, "\n".join(lines) + "\n", "history.jsonl")
    message = error_of(path)
    if reason.endswith(": "):  # orjson's own wording after the prefix varies by version
        assert message.startswith(f"{path} {reason}")
    else:
        assert message == f"{path} {reason}"


def test_jsonl_overlong_line(tmp_path: Path) -> None:
    path = write(tmp_path, event(pad="x" * 70_000) + "\n", "history.jsonl")
    assert error_of(path) == f"{path} line 1: line is longer than 65536 bytes"


def test_jsonl_line_of_exactly_max_bytes_fits(tmp_path: Path) -> None:
    base = event(pad="")
    line = event(pad="x" * (65536 - len(base)))
    assert len(line) == 65536
    path = write(tmp_path, line + "\r\n" + event(match_id="m2") + "\n", "history.jsonl")
    assert [m.match_id for m in read_all(path)] == ["m1", "m2"]


def test_jsonl_with_bom(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff" + event() + "\n", "history.jsonl")
    assert read_all(path)[0].match_id == "m1"


# --- stdin, progress, bounded memory ----------------------------------------------------------


class FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BufferedReader(io.BytesIO(data))


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStdin((HEADER + "1767323045000,a,b,1\n").encode()))
    calls: list[tuple[int, int]] = []
    matches = list(read_history("-", progress=lambda n, at: calls.append((n, at))))
    assert [m.teams for m in matches] == [(("a",), ("b",))]
    assert calls == []  # no size to measure against
    assert not sys.stdin.buffer.closed  # stdin stays usable


def test_stdin_error_names_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStdin((HEADER + "x,a,b,1\n").encode()))
    with pytest.raises(HistoryError, match=r"^<stdin> line 2: played_at must be"):
        list(read_history(Path("-")))


def test_progress_reports_matches_and_bytes(tmp_path: Path) -> None:
    rows = "".join(f"1767323045000,a{i},b{i},1\n" for i in range(10_000))
    path = write(tmp_path, HEADER + rows)
    calls: list[tuple[int, int]] = []
    progress = lambda n, at: calls.append((n, at))  # noqa: E731
    assert sum(1 for _ in read_history(path, progress=progress)) == 10_000
    # After 4096 and 8192 matches, and at the end.
    assert [n for n, _ in calls] == [4096, 8192, 10_000]
    assert calls == sorted(calls)
    assert calls[-1][1] == path.stat().st_size


def test_progress_for_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, "".join(event(match_id=f"m{i}") + "\n" for i in range(5000)), "h.jsonl")
    calls: list[tuple[int, int]] = []
    list(read_history(path, progress=lambda n, at: calls.append((n, at))))
    assert calls == [(4096, calls[0][1]), (5000, path.stat().st_size)]


def test_csv_streams_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    with path.open("w") as out:
        out.write(HEADER)
        for i in range(30_000):
            out.write(f"2026-01-02T03:{i // 60 % 60:02d}:{i % 60:02d}Z,p{i % 997},q{i % 991},1\n")
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_history(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 30_000
    assert path.stat().st_size > 900_000
    assert peak < 300_000  # a few buffers (about 80 kB measured), not the file


def test_file_without_newlines_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "x" * 10_000_000)
    tracemalloc.start()
    try:
        message = error_of(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == f"{path} line 2: bad CSV: field larger than field limit (131072)"
    assert peak < 30_000_000


def test_abandoned_reader_closes_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, HEADER + "1767323045000,a,b,1\n" * 3)
    opened: list[IO[bytes]] = []

    def spy(file: Path | str, mode: str) -> IO[bytes]:
        handle = open(file, "rb")  # noqa: SIM115
        assert mode == "rb"
        opened.append(handle)
        return handle

    monkeypatch.setattr(source, "open", spy, raising=False)
    matches = read_history(path)
    next(matches)
    (handle,) = opened
    assert not handle.closed
    matches.close()  # type: ignore[attr-defined]
    assert handle.closed


# --- property: only HistoryError, whatever the bytes ------------------------------------------


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.lists(
            st.sampled_from(
                [b"played_at,player_a,player_b,score_a", b"mode", b"1767323045000", b"a", b"b",
                 b"2026-01-02T03:04:05Z", b"0.5", b"1", b",", b"\n", b'"', b"{", b"}", b"\xff",
                 b'{"match_id":"m","mode":"x","finished_at":1767323045000,"teams":[["a"],["b"]],'
                 b'"ranks":[0,1]}', b"[", b"]", b"\r", b"\x00", b" "]
            ),
            max_size=40,
        ).map(b"".join),
    )
)  # fmt: skip
def test_read_history_raises_only_history_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.dat"
    path.write_bytes(data)
    try:
        for match in read_history(path):
            assert isinstance(match, HistoryMatch)
    except HistoryError as exc:
        assert str(exc).startswith(str(path))


# --- seed ratings ------------------------------------------------------------------------------


def test_seed_ratings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"player_id": "alice", "rating": 1800}\n'
        "\n"
        '{"player_id": "alice", "mode": "2v2", "rating": 1700.5, "deviation": 80, '
        '"volatility": 0.05, "note": "imported"}\n'
        '{"player_id": "bob", "mode": null, "rating": -3, "deviation": null, "games": null}\n'
        '{"player_id": "cy", "rating": 1600, "games": 212}\n',
        "seeds.jsonl",
    )
    assert list(read_seed_ratings(path)) == [
        SeedRating(1, "alice", None, 1800.0, None, None),
        SeedRating(3, "alice", "2v2", 1700.5, 80.0, 0.05),
        SeedRating(4, "bob", None, -3.0, None, None),
        SeedRating(5, "cy", None, 1600.0, None, None, 212),
    ]


SEED = '{"player_id": "a", "rating": 1500'


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"rating": 1500}', "line 1: player_id: required field is missing"),
        ('{"player_id": null, "rating": 1500}', "line 1: player_id: required, got null"),
        ('{"player_id": 7, "rating": 1}', "line 1: player_id: expected a non-empty string, got 7"),
        ('{"player_id": "a"}', "line 1: rating: required field is missing"),
        ('{"player_id": "a", "rating": "1500"}', "line 1: rating: expected a number, got '1500'"),
        ('{"player_id": "a", "rating": true}', "line 1: rating: expected a number, got true"),
        ('{"player_id": "a", "rating": 1e7}', "line 1: rating: 10000000.0 is outside -1e6..1e6"),
        (SEED + ', "deviation": -1}', "line 1: deviation: must not be negative, got -1.0"),
        (SEED + ', "volatility": 0}', "line 1: volatility: must be positive, got 0.0"),
        (SEED + ', "mode": ""}', "line 1: mode: expected a non-empty string, got ''"),
        (SEED + ', "games": -1}', "line 1: games: expected an integer >= 0, got -1"),
        (SEED + ', "games": 2.5}', "line 1: games: expected an integer >= 0, got 2.5"),
        (SEED + "}\n" + SEED + "}", "line 2: player 'a' is already seeded on line 1"),
        (
            SEED + ', "mode": "x"}\n\n' + SEED + ', "mode": "x"}',
            "line 3: player 'a' is already seeded in mode 'x' on line 1",
        ),
        ("[1]", "line 1: expected a JSON object with player_id and rating"),
        ("player_id,rating", "line 1: not valid JSON: "),
    ],
)
def test_seed_rating_errors(tmp_path: Path, text: str, reason: str) -> None:
    path = write(tmp_path, text + "\n", "seeds.jsonl")
    with pytest.raises(HistoryError) as caught:
        list(read_seed_ratings(path))
    if reason.endswith(": "):
        assert str(caught.value).startswith(f"{path} {reason}")
    else:
        assert str(caught.value) == f"{path} {reason}"


def test_seed_ratings_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"seeds\.jsonl: cannot open: No such file or directory"):
        list(read_seed_ratings(tmp_path / "seeds.jsonl"))


def test_a_pipe_named_as_a_path_is_read_without_a_position(tmp_path: Path) -> None:
    # /dev/stdin or a shell's <(...): the file cannot tell where it is, so no progress is
    # reported from it, and every match is read.
    read, write = os.pipe()
    os.write(write, b"played_at,player_a,player_b,score_a\n2026-01-01T00:00:00Z,a,b,1\n")
    os.close(write)
    seen: list[tuple[int, int]] = []
    try:
        matches = list(read_history(f"/dev/fd/{read}", lambda n, at: seen.append((n, at))))
    finally:
        os.close(read)
    assert [m.teams for m in matches] == [(("a",), ("b",))] and seen == []
