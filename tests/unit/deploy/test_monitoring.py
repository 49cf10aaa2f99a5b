"""Static checks of the monitoring files: the Grafana dashboard and its provisioning, the
Prometheus rules, and where Compose and Kubernetes load them.

Every metric a panel or a rule queries must be one the worker exports, with the labels the
query names: the metrics are read from a worker's registry after each of them has been given
a value (the cache feed's figures included), and the queries are read with a small PromQL
reader. A renamed metric or label then fails here instead of leaving an empty panel or an
alert that can never fire. ``promtool`` (Debian's ``prometheus`` package) checks the rules and
the Prometheus config, and runs the alerts' unit tests (rules.test.yml, rules.drift.test.yml),
when it is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from test_deploy_files import DEPLOY, PROMETHEUS, kustomization, mounts, services

from stream.cache.feed import FeedStats
from stream.offline.ratingdrift import DriftPoint, spread
from stream.pipeline.metrics import WorkerMetrics

RULES = DEPLOY / "prometheus" / "rules.yml"
RULES_TESTS = DEPLOY / "prometheus" / "rules.test.yml"
# The drift alert's tests, evaluated hourly (its figures move over hours and weeks).
DRIFT_RULES_TESTS = DEPLOY / "prometheus" / "rules.drift.test.yml"
GRAFANA = DEPLOY / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "skillstream.json"
DATASOURCES = GRAFANA / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDERS = GRAFANA / "provisioning" / "dashboards" / "skillstream.yml"

# Labels Prometheus adds to every scraped series (the target's), and the metric it makes itself.
TARGET_LABELS = frozenset({"job", "instance"})
PROMETHEUS_METRICS: dict[str, frozenset[str]] = {"up": frozenset()}
# Grafana's variables, as a query would read once Grafana has filled them in.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$mode": "ranked-1v1"}

PROMQL_KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"}
    | {"group_left", "group_right"}
)
LABEL_LISTS = re.compile(
    r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", re.IGNORECASE
)
# A metric name with its optional label matchers; a name followed by "(" is a function.
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"")


# --- what the worker exports ----------------------------------------------------------------


@cache
def exported() -> dict[str, frozenset[str]]:
    """Every sample name a worker serves at /metrics, with its label names."""
    metrics = WorkerMetrics()
    metrics.count_outbox(Counter(ratings_win=1, duplicate_starts=1))
    metrics.events_in.labels("match-finished").inc()
    metrics.events_out.labels("rating-changed").inc()
    metrics.dead_lettered.labels("match-finished", "not_json").inc()
    metrics.latency.observe(0.1)
    metrics.batch_seconds.labels("matches").observe(0.1)
    metrics.consumer_lag.labels("match-finished").set(3)
    metrics.ready.set(1)
    metrics.stuck.labels("match").set(1)
    metrics.stuck_total.labels("match").inc()
    metrics.tables_behind.labels("ratings").inc()
    metrics.tables_unchecked.labels("ratings").inc()
    metrics.refused_partitions.set(0)
    stats = FeedStats(dead_letter_reasons=Counter(not_json=1))
    stats.quality.observe_event({"mode": "1v1", "expected_score": 0.6, "outcome": "win"})
    ratings = spread([1400.0, 1500.0, 1650.0])
    stats.drift["1v1"] = DriftPoint("1v1", 0.0, 3, ratings, spread([0.0, 10.0, 40.0]), 2)
    stats.season_started["1v1"] = 1_767_225_600.0
    metrics.watch_cache(lambda: stats)
    metrics.refresh_cache()
    found: dict[str, frozenset[str]] = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            found[sample.name] = found.get(sample.name, frozenset()) | frozenset(sample.labels)
    return found


def recorded() -> dict[str, frozenset[str]]:
    """The recording rules' series, with the labels their aggregation keeps."""
    result = {}
    for rule in rules():
        if "record" in rule:
            by = re.findall(r"\bby\s*\(([^)]*)\)", rule["expr"])
            kept = {label.strip() for group in by for label in group.split(",") if label.strip()}
            result[rule["record"]] = frozenset(kept)
    return result


def known_metrics() -> dict[str, frozenset[str]]:
    return {**exported(), **PROMETHEUS_METRICS, **recorded()}


# --- what the queries ask for ---------------------------------------------------------------


def selectors(expr: str) -> Iterator[tuple[str, frozenset[str]]]:
    """(metric name, label names matched) of every selector in a PromQL expression."""
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    expr = LABEL_LISTS.sub(" ", expr)  # label names, not metrics
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    expr = re.sub(r"\boffset\s+\w+", "", expr)
    expr = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", "", expr)  # numbers
    for match in SELECTOR.finditer(expr):
        name, matchers, call = match.groups()
        if call or name.lower() in PROMQL_KEYWORDS:
            continue
        yield name, frozenset(label for label, _ in MATCHER.findall(matchers or ""))


def grouping_labels(expr: str) -> set[str]:
    """The labels named in by (...), on (...) and the like."""
    return {
        label.strip()
        for _, labels in LABEL_LISTS.findall(expr)
        for label in labels.split(",")
        if label.strip()
    }


def check_expression(expr: str) -> list[str]:
    """What ``expr`` asks for that no one exports: one line per problem."""
    known = known_metrics()
    problems = []
    available: set[str] = set(TARGET_LABELS)
    found = list(selectors(expr))
    if not found:
        problems.append(f"no metric found in {expr!r}")
    for name, labels in found:
        if name not in known:
            problems.append(f"{name} is not exported (in {expr!r})")
            continue
        available |= known[name]
        missing = labels - known[name] - TARGET_LABELS
        if missing:
            problems.append(f"{name} has no label {sorted(missing)} (in {expr!r})")
    ungrouped = grouping_labels(expr) - available
    if not problems and ungrouped:
        problems.append(f"no metric of {expr!r} has the labels {sorted(ungrouped)}")
    return problems


# --- the files ------------------------------------------------------------------------------


@cache
def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return data


def panels() -> list[dict[str, Any]]:
    return [p for p in dashboard()["panels"] if p["type"] != "row"]


def dashboard_queries() -> list[str]:
    queries = [t["expr"] for p in panels() for t in p["targets"]]
    for variable in dashboard()["templating"]["list"]:
        inner = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", variable["definition"])
        assert inner, variable["definition"]
        queries.append(f"sum by ({inner.group(2)}) ({inner.group(1)})")
    return queries


@cache
def rules() -> list[dict[str, Any]]:
    data = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [rule for group in data["groups"] for rule in group["rules"]]


def alerts() -> list[dict[str, Any]]:
    return [rule for rule in rules() if "alert" in rule]


def yaml_file(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


# --- the reader reads PromQL ----------------------------------------------------------------


def test_the_reader_finds_metrics_and_their_labels() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, agent) (rate(x_bucket{agent="a", le=~".*"}[5m])))'
        " / on (instance) group_left y offset 1d > 0.5 and z"
    )
    assert list(selectors(expr)) == [
        ("x_bucket", frozenset({"agent", "le"})),
        ("y", frozenset()),
        ("z", frozenset()),
    ]
    assert grouping_labels(expr) == {"le", "agent", "instance"}


def test_the_reader_catches_what_is_not_exported() -> None:
    assert check_expression("rate(skillstream_events_in_total[5m])") == []
    assert check_expression("rate(skillstream_event_in_total[5m])")  # a typo
    assert check_expression('skillstream_ready{topic="x"}')  # a label it does not have
    assert check_expression("sum by (mode) (skillstream_ready)")  # grouping by a missing label
    assert check_expression("sum by (mode) (skillstream_prediction_brier)") == []


def test_the_exported_metrics_cover_every_declared_one() -> None:
    # The registry after exercise() holds every family the worker declares: an empty family
    # would mean a metric the inventory above forgot to give a value.
    names = {family.name for family in WorkerMetrics().registry.collect()}
    sample_names = set(exported())
    for name in names:
        assert any(s == name or s.startswith(f"{name}_") for s in sample_names), name


# --- the dashboard --------------------------------------------------------------------------


@pytest.mark.parametrize("expr", dashboard_queries())
def test_dashboard_queries_only_exported_metrics(expr: str) -> None:
    assert check_expression(expr) == []


def test_dashboard_shape() -> None:
    board = dashboard()
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    (source,) = yaml_file(DATASOURCES)["datasources"]
    for panel in panels():
        assert panel["datasource"]["uid"] == source["uid"], panel["title"]
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_dashboard_shows_what_the_issue_asks() -> None:
    shown = " ".join(dashboard_queries())
    for metric in [
        "skillstream_events_in_total",  # throughput
        "skillstream_ratings_applied_total",
        "skillstream_rating_latency_seconds_bucket",  # latency
        "skillstream_consumer_lag",
        "skillstream_dead_lettered_total",  # by reason
        "skillstream_cache_dead_lettered_total",
        "skillstream_cache_lag_seconds",
        "skillstream_ready",
        "skillstream_prediction_log_loss",
        "skillstream_prediction_brier",
        "skillstream_prediction_calibration_error",
        "skillstream_prediction_calibration_observed",
    ]:
        assert re.search(rf"\b{metric}\b", shown), metric
    assert "reason" in grouping_labels(shown)


def test_grafana_is_provisioned_by_compose() -> None:
    grafana = mounts(services()["grafana"])
    assert grafana["/etc/grafana/provisioning"] == "./deploy/grafana/provisioning"
    (provider,) = yaml_file(DASHBOARD_PROVIDERS)["providers"]
    folder = provider["options"]["path"]
    assert grafana[folder] == "./deploy/grafana/dashboards"
    (source,) = yaml_file(DATASOURCES)["datasources"]
    host, port = re.fullmatch(r"http://([\w-]+):(\d+)", source["url"]).groups()  # type: ignore[union-attr]
    assert host in services()
    assert f"127.0.0.1:{port}:{port}" in services()[host]["ports"]
    assert (
        services()["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
        == f"{folder}/{DASHBOARD.name}"
    )


# --- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r.get("alert") or r["record"])
def test_rules_query_only_exported_metrics(rule: dict[str, Any]) -> None:
    assert check_expression(rule["expr"]) == []


def test_alerts_cover_what_the_issue_asks() -> None:
    by_metric = " ".join(rule["expr"] for rule in alerts())
    for metric in [
        "skillstream_consumer_lag",  # consumer lag growing
        "skillstream_dead_lettered_total",  # dead letters arriving
        "skillstream_cache_dead_lettered_total",
        "skillstream_cache_lag_seconds",  # cache lagging
        "skillstream_ready",  # a worker not ready
        "mode:skillstream_prediction_log_loss:mean",  # prediction quality drifting
        "mode:skillstream_prediction_calibration_error:mean",
    ]:
        assert re.search(rf"(?<![\w:]){re.escape(metric)}(?![\w:])", by_metric), metric
    for alert in alerts():
        assert alert["labels"]["severity"] in {"warning", "critical"}, alert["alert"]
        assert alert["annotations"]["summary"], alert["alert"]
        assert "docs/" in alert["annotations"]["description"], alert["alert"]
    names = [a["alert"] for a in alerts()]
    assert len(names) == len(set(names))


def test_compose_prometheus_loads_the_rules() -> None:
    config = yaml_file(PROMETHEUS)
    (rule_file,) = config["rule_files"]
    prometheus = mounts(services()["prometheus"])
    assert prometheus[rule_file] == "./deploy/prometheus/rules.yml"


def test_kubernetes_ships_the_same_rules() -> None:
    (generator,) = [
        g
        for g in kustomization()["configMapGenerator"]
        if g["name"] == "skillstream-prometheus-rules"
    ]
    assert generator["files"] == [str(RULES.relative_to(DEPLOY))]
    # A fixed name: a Prometheus mounting it by name keeps finding it after an edit.
    assert generator["options"]["disableNameSuffixHash"] is True


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["promtool", *args], check=False, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_checks_the_rules() -> None:
    run = promtool("check", "rules", str(RULES))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"SUCCESS: {len(rules())} rules found" in run.stdout


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_every_alert_fires_on_its_trouble_and_not_on_health() -> None:
    # rules.test.yml: input series for each alert, when it must fire and when it must not.
    run = promtool("test", "rules", str(RULES_TESTS), str(DRIFT_RULES_TESTS))
    assert run.returncode == 0, run.stdout + run.stderr
    tests = [*yaml_file(RULES_TESTS)["tests"], *yaml_file(DRIFT_RULES_TESTS)["tests"]]
    tested = {case["alertname"] for test in tests for case in test.get("alert_rule_test", [])}
    assert tested == {alert["alert"] for alert in alerts()}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_checks_the_compose_config(tmp_path: Path) -> None:
    # The config names the rules where Compose mounts them: point it at the file here.
    config = yaml_file(PROMETHEUS)
    config["rule_files"] = [str(RULES)]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run = promtool("check", "config", str(path))
    assert run.returncode == 0, run.stdout + run.stderr
