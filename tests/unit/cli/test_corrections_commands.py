"""`skillstream corrections` writes records replay accepts; `replay --corrections` applies
them; every mistake is one line naming the file, line, variable or value, exit 2."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from builders import Duel, duel_lines, run_command

from stream.cache.entry import CachedRating
from stream.cache.history import entry_of, worded
from stream.corrections.pseudonyms import pseudonym
from stream.corrections.records import Ban, Erase, Void, parse_correction

MATCHES: list[Duel] = [
    ("m1", "2026-03-01T10:00:00Z", "alice", "bob", [0, 1]),
    ("m2", "2026-03-01T11:00:00Z", "bob", "carol", [1, 0]),
    ("m3", "2026-03-02T10:00:00Z", "alice", "carol", [0, 0]),
]


def lines(skip: str = "") -> str:
    """The history as JSON lines of match-finished events (which carry match ids)."""
    return duel_lines(d for d in MATCHES if d[0] != skip)


KEY = "0123456789abcdef-key"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_command(argv, capsys)


def one_line(code: int, err: str, culprit: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1 and culprit in err and "Traceback" not in err, err


@pytest.fixture
def pseudonym_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' pseudonym key set to ``KEY``."""
    monkeypatch.setenv("SKILLSTREAM_PSEUDONYM_KEY", KEY)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text(lines())
    return path


def ratings(out: str) -> dict[str, float]:
    return {r["player_id"]: r["rating"] for r in map(orjson.loads, out.splitlines())}


def made(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The record `skillstream corrections ARGS` writes (it must succeed)."""
    code, line, err = run(["corrections", *args], capsys)
    assert code == 0, err
    return line


def corrected(
    history: Path, corrections: Path, records: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """`skillstream replay` of ``history`` with ``records`` as its corrections file."""
    corrections.write_text(records)
    return run(["replay", str(history), "--corrections", str(corrections)], capsys)


def test_a_void_written_by_the_command_makes_replay_rate_as_if_never_played(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = made(["void", "--matches", "m1", "--reason", "cheat"], capsys)
    void = parse_correction(orjson.loads(line))
    assert isinstance(void, Void) and void.matches == {"m1"} and void.audit.reason == "cheat"
    code, out, err = corrected(history, tmp_path / "c.jsonl", line, capsys)
    assert code == 0, err
    without = tmp_path / "without.jsonl"
    without.write_text(lines(skip="m1"))
    assert run(["replay", str(without)], capsys)[1] == out


@pytest.mark.usefixtures("pseudonym_key")
def test_an_erasure_holds_no_id_and_replay_names_the_pseudonym(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = made(["erase", "alice", "--reason", "GDPR art. 17"], capsys)
    assert "alice" not in line
    erase = parse_correction(orjson.loads(line))
    assert isinstance(erase, Erase) and erase.pseudonym == pseudonym(KEY.encode(), "alice")
    before = ratings(run(["replay", str(history)], capsys)[1])
    code, out, err = corrected(history, tmp_path / "c.jsonl", line, capsys)
    assert code == 0 and "alice" not in out, err
    after = ratings(out)
    assert after.pop(erase.pseudonym) == before.pop("alice") and after == before


def test_each_mistake_is_one_line(
    history: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SKILLSTREAM_PSEUDONYM_KEY", raising=False)
    c = tmp_path / "c.jsonl"
    base = '{"id":"c-1","by":"ops","at":"2026-11-25T08:00:00Z","reason":"r",'
    replay = ["replay", str(history), "--corrections", str(c)]
    c.write_text(base + '"kind":"void","matches":["m1","m404"]}\n')
    one_line(
        *run(replay, capsys)[::2], f"{c} line 1: void 'c-1': match 'm404' is not in the history"
    )
    c.write_text(
        base
        + '"kind":"void","player":"dave",'
        + '"from":"2026-03-01T00:00:00Z","until":"2026-03-05T00:00:00Z"}\n'
    )
    one_line(*run(replay, capsys)[::2], "void 'c-1' voids nothing: 'dave' finished no match")
    c.write_text("\n" + base + '"kind":"void"}\n')
    one_line(*run(replay, capsys)[::2], f"{c} line 2: a void names 'matches'")
    c.write_text(base + '"kind":"erase","pseudonym":"erased-1"}\n')
    one_line(*run(replay, capsys)[::2], "SKILLSTREAM_PSEUDONYM_KEY is not set")
    modes = tmp_path / "modes.toml"
    modes.write_text('[default]\nunlisted = "reject"\n[modes.duel]\n')
    c.write_text(base + '"kind":"adjust","mode":"ffa","player":"a","set":1600,"effective":0}\n')
    code, _, err = run([*replay, "--mode", "duel", "--modes-file", str(modes)], capsys)
    one_line(code, err, "'effective'")
    c.write_text(
        base + '"kind":"adjust","mode":"ffa","player":"a","set":1600,"effective":1780000000000}\n'
    )
    code, _, err = run([*replay, "--mode", "duel", "--modes-file", str(modes)], capsys)
    one_line(
        code, err, f"{c} line 1: adjust 'c-1': mode 'ffa' is not in every match is rated as 'duel'"
    )
    one_line(
        *run(["corrections", "erase", "alice", "--reason", "r"], capsys)[::2],
        "SKILLSTREAM_PSEUDONYM_KEY is not set",
    )
    monkeypatch.setenv("SKILLSTREAM_PSEUDONYM_KEY", "short")
    one_line(
        *run(["corrections", "erase", "alice", "--reason", "r"], capsys)[::2],
        "SKILLSTREAM_PSEUDONYM_KEY has 5 characters",
    )
    one_line(
        *run(
            ["corrections", "adjust", "m", "p", "--set", "1", "--shift", "2", "--reason", "r"],
            capsys,
        )[::2],
        "exactly one of --set RATING and --shift POINTS",
    )
    one_line(
        *run(
            [
                "corrections",
                "void",
                "--player",
                "p",
                "--from",
                "2026-03-02",
                "--until",
                "2026-03-01",
                "--reason",
                "r",
            ],
            capsys,
        )[::2],
        "'from' must be before 'until'",
    )
    one_line(
        *run(["corrections", "void", "--matches", "m1", "--reason", " "], capsys)[::2],
        "'reason' must be a string",
    )


def test_replay_words_each_change_of_a_player_as_ratings_explain_does(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, events, err = run(["replay", str(history), "--explain", "bob"], capsys)
    assert code == 0, err
    changes = [orjson.loads(line) for line in events.splitlines()]
    assert [c["match_id"] for c in changes] == ["m1", "m2"]
    code, text, err = run(["replay", str(history), "--explain", "bob", "--worded"], capsys)
    assert code == 0, err
    blocks = text.strip("\n").split("\n\n")
    assert len(blocks) == 2
    for block, change in zip(blocks, changes, strict=True):
        head, *sentences = block.splitlines()
        assert head == f"{change['at']} duel:"
        assert sentences == worded(entry_of(CachedRating.from_rating_changed(change)), "bob")
    assert blocks[0].splitlines()[1] == "Before match m1 (a loss), bob was rated 1500 " + (
        "(uncertainty 261)."
    )
    code, _, err = run(["replay", str(history), "--explain", "dave"], capsys)
    assert code == 1 and err == "skillstream replay: nothing found: 'dave' played no rated match\n"


def test_each_mistake_of_a_live_re_rate_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before anything connects: a generation below 2, the shadow named as
    rating-changed itself, a corrections file that is missing; and a worker given a
    corrections file it cannot apply."""
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")
    cutover = ["corrections", "cutover", "--group", "g2", "--reason", "r"]
    one_line(
        *run([*cutover, "--shadow", "s", "--generation", "1"], capsys)[::2],
        "--generation: a re-rate's generation is 2 or more, got 1",
    )
    one_line(
        *run([*cutover, "--shadow", "rating-changed", "--generation", "2"], capsys)[::2],
        "--shadow: 'rating-changed' is rating-changed itself",
    )
    missing = tmp_path / "none.jsonl"
    one_line(*run(["corrections", "resolve", str(missing)], capsys)[::2], str(missing))
    c = tmp_path / "c.jsonl"
    c.write_text(
        '{"id":"c-1","by":"ops","at":"2026-11-25T08:00:00Z","reason":"r","kind":"void",'
        '"player":"p","from":"2026-03-01T00:00:00Z","until":"2026-03-02T00:00:00Z"}\n'
    )
    monkeypatch.setenv("SKILLSTREAM_CORRECTIONS_FILE", str(c))
    one_line(
        *run(["worker"], capsys)[::2],
        f"SKILLSTREAM_CORRECTIONS_FILE {c} line 1: void 'c-1' names a player and a time window",
    )
    monkeypatch.setenv("SKILLSTREAM_CORRECTIONS_FILE", str(missing))
    one_line(
        *run(["worker"], capsys)[::2], f"SKILLSTREAM_CORRECTIONS_FILE: no such file: {missing}"
    )
    c.write_text(
        '{"id":"c-2","by":"ops","at":"2026-11-25T08:00:00Z","reason":"r","kind":"adjust",'
        '"mode":"duels","player":"p","set":1500,"effective":"2026-03-01T00:00:00Z"}\n'
    )
    modes = tmp_path / "modes.toml"
    modes.write_text('[default]\nunlisted = "reject"\n[modes.ranked]\n')
    monkeypatch.setenv("SKILLSTREAM_CORRECTIONS_FILE", str(c))
    monkeypatch.setenv("SKILLSTREAM_MODES_FILE", str(modes))
    one_line(
        *run(["worker"], capsys)[::2],
        f"SKILLSTREAM_CORRECTIONS_FILE {c} line 1: adjust 'c-2': mode 'duels' is not in the "
        "modes file",
    )


@pytest.mark.usefixtures("pseudonym_key")
def test_an_erasure_made_with_another_key_is_refused_not_applied_as_nothing(
    history: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = made(["erase", "alice", "--reason", "GDPR art. 17"], capsys)
    record = orjson.loads(line)
    # The key's fingerprint, never the key: it tells two keys apart and gives neither away.
    assert len(record["key"]) == 16 and record["key"] not in KEY and KEY not in line
    monkeypatch.setenv("SKILLSTREAM_PSEUDONYM_KEY", "another-key-of-16-chars")
    corrections = tmp_path / "c.jsonl"
    code, out, err = corrected(history, corrections, line, capsys)
    one_line(code, err, f"{corrections} line 1: erase {record['id']!r} was made with another")
    assert out == ""  # alice is not written out under her id


@pytest.mark.usefixtures("pseudonym_key")
def test_corrections_that_would_do_nothing_are_refused_unless_they_say_they_may(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrections = tmp_path / "c.jsonl"
    cases = [
        (["erase", "nobody-here"], "erases nobody: no player of the history has its pseudonym"),
        (["adjust", "duel", "nobody-here", "--shift", "25"], "adjusts nobody: 'nobody-here'"),
        (
            ["adjust", "due1", "alice", "--shift", "25"],
            "no match of the history is in mode 'due1'; did you mean 'duel'?",
        ),
    ]
    for args, culprit in cases:
        line = made([*args, "--reason", "x"], capsys)
        code, out, err = corrected(history, corrections, line, capsys)
        one_line(code, err, f"{corrections} line 1: ")
        assert culprit in err and out == ""
        # Said on purpose, it is applied.
        line = made([*args, "--reason", "x", "--may-match-nothing"], capsys)
        code, out, err = corrected(history, corrections, line, capsys)
        assert code == 0, err


@pytest.mark.usefixtures("pseudonym_key")
def test_applying_a_corrections_file_says_what_it_did(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = [
        ["void", "--matches", "m1"],
        ["adjust", "duel", "bob", "--shift", "10", "--effective", "2026-03-01T10:30:00Z"],
        ["erase", "carol"],
    ]
    corrections = tmp_path / "c.jsonl"
    records = "".join(made([*a, "--reason", "x"], capsys) for a in listed)
    code, _, err = corrected(history, corrections, records, capsys)
    assert code == 0, err
    assert err.splitlines() == [
        f"skillstream replay: {corrections}: voided 1 match, adjusted 1 rating, erased 1 player"
    ]


def test_a_ban_refunds_the_banned_and_those_they_beat_and_keeps_the_rest(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # alice beat bob (m1) and drew with carol (m3): banned over both, her results and bob's
    # loss to her are undone; carol's draw with her is kept.
    window = ["--since", "2026-03-01", "--until", "2026-03-03"]
    line = made(["ban", "duel", "alice", *window, "--reason", "aimbot"], capsys)
    ban = parse_correction(orjson.loads(line))
    assert isinstance(ban, Ban) and ban.player == "alice" and ban.policy == "refund"
    corrections = tmp_path / "c.jsonl"
    code, out, err = corrected(history, corrections, line, capsys)
    assert code == 0, err
    finals = {r["player_id"]: r for r in map(orjson.loads, out.splitlines())}
    assert sorted(finals) == ["bob", "carol"]
    assert (finals["bob"]["games"], finals["carol"]["games"]) == (1, 2)
    assert err.splitlines()[0] == (
        f"skillstream replay: {corrections}: voided 0 matches, adjusted 0 ratings, erased 0"
        " players, refunded 3 results"
    )
    # Voided instead, the two matches count for nobody.
    line = made(["ban", "duel", "alice", *window, "--policy", "void", "--reason", "x"], capsys)
    code, out, err = corrected(history, corrections, line, capsys)
    assert code == 0, err
    assert {r["player_id"]: r["games"] for r in map(orjson.loads, out.splitlines())} == {
        "bob": 1,
        "carol": 1,
    }
    assert "voided 2 matches" in err and "refunded" not in err


def test_a_refund_is_explained_by_replay_as_ratings_explain_words_it(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # carol, banned from m2 on, beat bob there: bob (rated since m1) is refunded.
    window = ["--since", "2026-03-01T10:30:00Z", "--until", "2026-03-03"]
    line = made(["ban", "duel", "carol", *window, "--reason", "smurf", "--by", "ana"], capsys)
    ban_id = orjson.loads(line)["id"]
    corrections = tmp_path / "c.jsonl"
    corrections.write_text(line)
    args = ["replay", str(history), "--corrections", str(corrections), "--explain", "bob"]
    code, events, err = run(args, capsys)
    assert code == 0, err
    changes = [orjson.loads(e) for e in events.splitlines()]
    assert [(c["match_id"], c["outcome"]) for c in changes] == [("m1", "loss"), ("m2", "refunded")]
    refund = changes[1]
    assert refund["refund"] == {"by": "ana", "reason": "smurf", "banned": "carol", "ban": ban_id}
    assert refund["rating"] == refund["previous"]["rating"] == changes[0]["rating"]
    code, text, err = run([*args, "--worded"], capsys)
    assert code == 0, err
    block = text.strip("\n").split("\n\n")[1].splitlines()
    assert block[1:] == worded(entry_of(CachedRating.from_rating_changed(refund)), "bob")
    assert block[1] == (
        f"Match m2 no longer counts for bob: refunded: their opponent carol was banned by an"
        f" operator (ana, {ban_id}): smurf."
    )


def test_each_mistake_of_a_ban_is_one_line(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    since = ["--since", "2026-03-02", "--reason", "r"]
    one_line(
        *run(["corrections", "ban", "duel", "a", *since, "--until", "2026-03-01"], capsys)[::2],
        "--since 2026-03-02T00:00:00.000Z is not before --until 2026-03-01T00:00:00.000Z",
    )
    one_line(
        *run(["corrections", "ban", "duel", "a", *since, "--policy", "refnd"], capsys)[::2],
        "did you mean 'refund'?",
    )
    one_line(*run(["corrections", "ban", "duel", "a", "--reason", "r"], capsys)[::2], "--since")
    line = made(["ban", "duel", "dave", *since], capsys)
    code, _, err = corrected(history, tmp_path / "c.jsonl", line, capsys)
    one_line(code, err, "refunds nothing: 'dave' finished no match in mode 'duel' from")
    line = made(["ban", "dule", "alice", *since], capsys)
    code, _, err = corrected(history, tmp_path / "c.jsonl", line, capsys)
    one_line(code, err, "did you mean 'duel'?")


def test_a_ban_repeated_is_refused_and_two_cheaters_who_met_are_both_banned(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    window = ["--since", "2026-03-01", "--until", "2026-03-03", "--reason", "r"]
    alice = made(["ban", "duel", "alice", *window], capsys)
    again = made(["ban", "duel", "alice", *window], capsys)
    code, _, err = corrected(history, tmp_path / "c.jsonl", alice + again, capsys)
    one_line(code, err, "refunds nothing more: every result it covers is refunded from line 1 on")
    # bob lost to alice (m1): banned as well, his ban still refunds his own results.
    bob = made(["ban", "duel", "bob", *window], capsys)
    code, out, err = corrected(history, tmp_path / "c.jsonl", alice + bob, capsys)
    assert code == 0, err
    assert {r["player_id"]: r["games"] for r in map(orjson.loads, out.splitlines())} == {"carol": 2}
