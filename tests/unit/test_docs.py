"""The documentation's links resolve, and the README opens with the two commands CI and users run.

Links are checked as GitHub renders them: a relative path must name a file of the checkout, and
a ``#fragment`` into a Markdown file must be the slug of one of its headings (lower case,
punctuation other than ``-`` dropped, spaces as ``-``, a repeated heading numbered ``-1``...).
Links inside fenced code blocks are text, not links, and are left alone. The pages are the
README, docs/ and docs/journal/ (whose relative links go up to docs/ with ``../``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "journal").glob("*.md")),
]
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    names: set[str] = set()
    repeats: dict[str, int] = {}
    for heading in HEADING.findall(FENCED.sub("", page.read_text())):
        base = slug(heading)
        count = repeats.get(base, 0)
        repeats[base] = count + 1
        names.add(base if count == 0 else f"{base}-{count}")
    return names


def broken_links(page: Path) -> list[str]:
    broken: list[str] = []
    for target in LINK.findall(FENCED.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target} (no such heading)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_missing_file_or_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Known problems (Tansu 0.6.0)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n[a](other.md#known-problems-tansu-060) [b](other.md#gone) [c](missing.md)"
        " [d](#top) [e](https://example.org/x)\n```\n[f](in-a-code-block.md)\n```\n"
    )
    assert broken_links(page) == ["other.md#gone (no such heading)", "missing.md (no such file)"]


def test_the_readme_opens_with_the_two_commands() -> None:
    opening = (ROOT / "README.md").read_text().split("\n")[:6]
    assert opening[0] == "# skillstream"
    assert opening[2:6] == [
        "```sh",
        "make run    # set up .venv, start Tansu + Valkey + a worker + the fleet simulator on"
        " loopback, live view; Ctrl-C stops all",
        "make test   # set up .venv, then ruff, mypy --strict and the whole pytest suite",
        "```",
    ]


def code_map() -> dict[str, set[str]]:
    """docs/architecture.md's map of the code: the module names under each ``stream/...``
    package line of its code block."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Map of the code") :]
    block = FENCED.search(section)
    assert block is not None, "docs/architecture.md: the map of the code has no code block"
    listed: dict[str, set[str]] = {}
    package = ""
    for line in block.group(0).splitlines():
        if line.startswith("stream/") and line.rstrip().endswith("/"):
            package = line.strip()
        elif package and (found := re.match(r"  (\S+\.py)\s", line + " ")):
            listed.setdefault(package, set()).add(found.group(1))
    return listed


def test_the_code_map_names_every_module() -> None:
    listed = code_map()
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "stream").rglob("*.py"))
        if path.name != "__init__.py"
        and path.name not in listed.get(f"{path.parent.relative_to(ROOT)}/", set())
    ]
    assert missing == [], f"docs/architecture.md's map of the code misses {missing}"
    gone = [
        f"{package}{name}"
        for package, names in listed.items()
        for name in names
        if not (ROOT / package / name).exists()
    ]
    assert gone == [], f"docs/architecture.md's map of the code names modules that are gone: {gone}"


def test_the_journal_is_checked_and_indexed() -> None:
    journal = sorted((ROOT / "docs" / "journal").glob("*.md"))
    assert ROOT / "docs" / "journal" / "README.md" in journal
    assert set(journal) <= set(PAGES)
    index = (ROOT / "docs" / "journal" / "README.md").read_text()
    unindexed = [p.name for p in journal if p.name != "README.md" and f"]({p.name})" not in index]
    assert unindexed == [], f"docs/journal/README.md does not list {unindexed}"
    assert "](journal/README.md)" in (ROOT / "docs" / "README.md").read_text()


def test_a_link_from_a_subfolder_goes_up(tmp_path: Path) -> None:
    (tmp_path / "top.md").write_text("# Where it stands\n")
    (tmp_path / "sub").mkdir()
    page = tmp_path / "sub" / "entry.md"
    page.write_text("[a](../top.md#where-it-stands) [b](top.md) [c](../top.md#gone)\n")
    assert broken_links(page) == ["top.md (no such file)", "../top.md#gone (no such heading)"]
