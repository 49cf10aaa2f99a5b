"""Creating the missing topics reads the broker's answer for each (stream/pipeline/topics.py).

aiokafka's ``create_topics`` returns the broker's codes without raising; the local broker never
refuses a creation and no broker with an authorizer runs on the development machine, so the
answers of one are given here as the protocol's CreateTopics response carries them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stream.config.settings import Settings
from stream.pipeline.topics import (
    TopicError,
    TopicSpec,
    _create_missing,
    worker_optional_topics,
)
from stream.reachability import AccessDeniedError


class Answers:
    """An admin client whose broker answers each CreateTopics with the code given per topic."""

    def __init__(self, existing: list[str], codes: dict[str, tuple[int, str | None]]) -> None:
        self.existing, self.codes = existing, codes

    async def list_topics(self) -> list[str]:
        return self.existing

    async def create_topics(self, topics: list[Any]) -> Any:
        errors = [(t.name, *self.codes.get(t.name, (0, None))) for t in topics]
        return type("Response", (), {"topic_errors": errors})()

    async def describe_topics(self, names: list[str]) -> list[dict[str, Any]]:
        return [{"topic": n, "partitions": [0]} for n in names]


SPECS = [TopicSpec("a", 1, 1), TopicSpec("b", 1, 1), TopicSpec("c", 1, 1)]


def create(admin: Answers) -> list[str]:
    return asyncio.run(_create_missing(admin, SPECS, "KAFKA_SASL_USERNAME 'w'"))


def test_created_and_existing_topics_are_told_apart() -> None:
    assert create(Answers(["a"], {"c": (36, "Topic 'c' already exists.")})) == ["b"]


def test_a_topic_the_principal_may_not_create_is_one_line_naming_it() -> None:
    with pytest.raises(AccessDeniedError) as refused:
        create(Answers(["a"], {"b": (29, "Authorization failed.")}))
    assert str(refused.value) == (
        "KAFKA_SASL_USERNAME 'w' finds no topic 'b' and may not create it (CREATE on TOPIC b; or"
        " it lacks DESCRIBE on it): run `skillstream topics create` with an administrator's"
        " credentials first (docs/operations.md#access-who-may-do-what)"
    )


def test_any_other_refusal_is_a_topic_error_with_the_brokers_reason() -> None:
    with pytest.raises(TopicError, match="topic 'b': the broker refused to create it: too many"):
        create(Answers([], {"b": (37, "too many partitions")}))
    with pytest.raises(TopicError, match="InvalidReplicationFactorError"):
        create(Answers([], {"b": (38, None)}))


def test_a_topic_the_worker_may_not_create_is_left_out_when_optional() -> None:
    admin = Answers(["a"], {"c": (29, "Authorization failed.")})
    created = asyncio.run(_create_missing(admin, SPECS, "w", frozenset({"c"})))
    assert created == ["b"]
    assert worker_optional_topics(Settings()) == {Settings().topics.audit}
