"""Static checks of the deployment files: Dockerfile, .dockerignore, docker-compose.yml, the
Prometheus config and the Kubernetes manifests in deploy/.

Nothing here builds an image or starts a container. The checks catch the drift that would
otherwise only show at deploy time: a setting the code does not read, a probe on the wrong
port, a selector that matches nothing, a manifest kustomize does not apply.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from stream.config.modes import load_modes

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PROMETHEUS = DEPLOY / "prometheus" / "prometheus.yml"
SETTINGS_SOURCE = ROOT / "stream" / "config" / "settings.py"

PROJECT_IMAGE = "skillstream:local"  # docker-compose.yml's name for the image it builds
SETTING_NAME = re.compile(r"""["']((?:KAFKA|REDIS|SKILLSTREAM)_[A-Z0-9_]+)["']""")
SETTING_PREFIX = re.compile(r"^(KAFKA|REDIS|SKILLSTREAM)_")
# Kept out of the ConfigMap: these may carry credentials (REDIS_URL: redis://user:pass@...).
SECRET_SETTINGS = {"REDIS_URL", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"}
NOT_APPLIED = {"kustomization.yaml", "secret.example.yaml"}


# --- sources ------------------------------------------------------------------------------------


@cache
def known_settings() -> frozenset[str]:
    """Every environment variable the settings code reads: the quoted names in
    stream/config/settings.py and in the stream.config modules it imports them through
    (stream/config/security.py reads the KAFKA_SECURITY/SASL/SSL ones)."""
    source = SETTINGS_SOURCE.read_text(encoding="utf-8")
    texts = [source]
    for module in re.findall(r"^from stream\.config\.(\w+) import", source, re.MULTILINE):
        path = SETTINGS_SOURCE.parent / f"{module}.py"
        if path.is_file():
            texts.append(path.read_text(encoding="utf-8"))
    return frozenset(name for text in texts for name in SETTING_NAME.findall(text))


def unknown_settings(names: Any) -> list[str]:
    return sorted(n for n in names if SETTING_PREFIX.match(n) and n not in known_settings())


@cache
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return data


def services() -> dict[str, Any]:
    result: dict[str, Any] = compose()["services"]
    return result


def project_services() -> dict[str, Any]:
    """The services that run the skillstream image (topics, workers, simulator)."""
    return {
        name: svc
        for name, svc in services().items()
        if svc.get("image") == PROJECT_IMAGE or "build" in svc
    }


def worker_services() -> dict[str, Any]:
    return {n: s for n, s in project_services().items() if s.get("command") == ["worker"]}


def env_of(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # KEY=VALUE form
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


@cache
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue  # Docker drops comment lines, also inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, rest = (pending + line).partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    assert not pending, "Dockerfile ends inside a continued line"
    return instructions


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile()
    last_from = max(i for i, (kw, _) in enumerate(instructions) if kw == "FROM")
    return instructions[last_from:]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, rest in final_stage():
        if keyword == "ENV":
            for item in shlex.split(rest):
                key, _, value = item.partition("=")
                env[key] = value
    return env


def image_uid() -> int:
    users = [rest for kw, rest in final_stage() if kw == "USER"]
    assert users, "the runtime stage has no USER: the worker would run as root"
    return int(users[-1].split(":")[0])


@cache
def manifests() -> dict[tuple[str, str], dict[str, Any]]:
    """The Kubernetes objects in deploy/*.yaml by (kind, name), the example Secret included."""
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(DEPLOY.glob("*.y*ml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                key = (doc["kind"], doc["metadata"]["name"])
                assert key not in objects, f"{key} defined twice"
                objects[key] = doc
    return objects


def kind(kind_name: str) -> dict[str, Any]:
    found = [obj for (k, _), obj in manifests().items() if k == kind_name]
    assert len(found) == 1, f"expected one {kind_name} in deploy/, found {len(found)}"
    return found[0]


@cache
def kustomization() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text("utf-8"))
    return data


def settings_configmap() -> dict[str, str]:
    data: dict[str, str] = manifests()[("ConfigMap", "skillstream-config")]["data"]
    return data


def web_port() -> int:
    return int(settings_configmap()["SKILLSTREAM_WEB_PORT"])


def statefulset() -> dict[str, Any]:
    return kind("StatefulSet")


def job() -> dict[str, Any]:
    return kind("Job")


def only_container(workload: dict[str, Any]) -> dict[str, Any]:
    containers = workload["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def container_port(container: dict[str, Any], port: int | str) -> int:
    """A probe's or Service's port, resolving a named container port."""
    if isinstance(port, int):
        return port
    named = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
    assert named, f"no container port named {port!r}"
    return int(named[0])


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


# --- every file ---------------------------------------------------------------------------------


def yaml_files() -> list[Path]:
    return [COMPOSE, *sorted(DEPLOY.rglob("*.yaml")), *sorted(DEPLOY.rglob("*.yml"))]


@pytest.mark.parametrize("path", yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_yaml_parses(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert docs, f"{path} holds no document"
    assert all(isinstance(d, dict) for d in docs)


def test_settings_scan_finds_the_settings() -> None:
    # Guards the guard: an empty scan would make every "known setting" check fail for nothing.
    assert {"KAFKA_BOOTSTRAP_SERVERS", "REDIS_URL", "SKILLSTREAM_PARTITIONS"} <= known_settings()


# --- Dockerfile and .dockerignore ---------------------------------------------------------------


def test_dockerfile_is_multi_stage_on_slim_python() -> None:
    instructions = dockerfile()
    args = dict(
        rest.split("=", 1)
        for kw, rest in instructions[: [kw for kw, _ in instructions].index("FROM")]
        if kw == "ARG" and "=" in rest
    )
    bases = [rest.split()[0] for kw, rest in instructions if kw == "FROM"]
    assert len(bases) >= 2, "expected a build stage and a runtime stage"
    final = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), bases[-1])
    assert final == "python:3.11-slim"


def test_dockerfile_runs_as_a_non_root_user() -> None:
    assert image_uid() != 0


def test_dockerfile_runtime_stage_installs_nothing() -> None:
    # The venv is built in the build stage and copied: no pip (nor test tools) at run time.
    runs = [rest for kw, rest in final_stage() if kw == "RUN"]
    assert not [r for r in runs if "pip" in r]
    copies = [rest for kw, rest in final_stage() if kw == "COPY"]
    assert all(c.startswith("--from=") for c in copies), copies


def test_dockerfile_caches_dependencies_before_the_source() -> None:
    instructions = dockerfile()

    def first(predicate: Any) -> int:
        return next(i for i, item in enumerate(instructions) if predicate(*item))

    pyproject = first(lambda kw, rest: kw == "COPY" and "pyproject.toml" in rest)
    deps = first(lambda kw, rest: kw == "RUN" and "pip" in rest and " install" in rest)
    source = first(lambda kw, rest: kw == "COPY" and re.search(r"\bstream/?\s", rest + " "))
    assert pyproject < deps < source
    package = [r for kw, r in instructions[source:] if kw == "RUN" and "install" in r]
    assert package and "--no-deps" in package[0]
    # The dependency layer includes the [rocksdb] extra (SKILLSTREAM_STORE=rocksdb).
    assert any("rocksdb" in rest for kw, rest in instructions[pyproject:source] if kw == "RUN")


def test_dockerfile_entrypoint_health_and_port() -> None:
    stage = final_stage()
    last = {kw: rest for kw, rest in stage}
    assert last["ENTRYPOINT"] == '["skillstream"]'
    assert last["CMD"] == '["worker"]'
    env = image_env()
    port = env["SKILLSTREAM_WEB_PORT"]
    assert last["EXPOSE"].split() == [port]
    health = last["HEALTHCHECK"]
    assert "/health" in health and "python" in health
    assert "curl" not in health and "wget" not in health  # neither is in the slim image
    assert port in health or "SKILLSTREAM_WEB_PORT" in health
    assert env["SKILLSTREAM_DATA_DIR"] == "/var/lib/skillstream"
    assert env["SKILLSTREAM_LOG_FORMAT"] == "json"
    assert env["PYTHONUNBUFFERED"] == "1"


def test_dockerfile_env_names_are_known_settings() -> None:
    assert unknown_settings(image_env()) == []


def dockerignore_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (anchored at the context root) as a regular expression."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out, i = out + pattern[i : end + 1], end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def dockerignored(path: str) -> bool:
    """Docker's rule: the last pattern that matches the path or one of its parents decides."""
    parts = PurePosixPath(path).parts
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        regex = dockerignore_regex(line.removeprefix("!").strip().strip("/"))
        if any(regex.fullmatch(c) for c in candidates):
            ignored = not negated
    return ignored


def test_dockerignore_keeps_the_sources_and_drops_local_state() -> None:
    copied = [
        word
        for kw, rest in dockerfile()
        if kw == "COPY" and not rest.startswith("--from")
        for word in rest.split()[:-1]
    ]
    assert copied
    for path in [*copied, "stream/cli/main.py", "stream/schemas/rating-changed.schema.json"]:
        assert not dockerignored(path.rstrip("/")), f"{path} is copied but .dockerignore drops it"
    for path in [
        ".venv/bin/python",
        ".git/HEAD",
        "out/report.txt",
        "skillstream-data/skillstream-data/v1",
        ".pytest_cache/v/cache",
        ".hypothesis/examples/x",
        "stream/__pycache__/events.cpython-311.pyc",
        "tests/unit/ratings/test_elo.py",
        # A build compiled on the developer's machine: the image compiles its own.
        "stream/ratings/_compiled_glicko2_kernel.cpython-311-x86_64-linux-gnu.so",
    ]:
        assert dockerignored(path), f"{path} would be sent to the builder"


def test_the_image_compiles_the_rating_arithmetic_and_checks_it_is_used() -> None:
    build_runs = [rest for kw, rest in dockerfile()[: -len(final_stage())] if kw == "RUN"]
    compiling = [r for r in build_runs if "skillstream compile" in r]
    assert len(compiling) == 1
    # mypyc from PYTHONPATH, never installed into the venv the runtime stage copies.
    assert "PYTHONPATH=" in compiling[0] and "--python /opt/venv" not in compiling[0]
    assert "is_compiled" in compiling[0] and "python -I" in compiling[0]
    assert any("gcc" in r for r in build_runs)
    assert not [r for kw, r in final_stage() if kw == "RUN" and ("gcc" in r or "mypy" in r)]


# --- docker-compose.yml -------------------------------------------------------------------------


def test_compose_has_the_services() -> None:
    assert "version" not in compose()  # obsolete in the compose spec
    assert {"kafka", "redis", "topics", "simulator", "prometheus"} <= set(services())
    assert sorted(worker_services()) == ["worker-1", "worker-2"]


def test_compose_project_env_names_are_known_settings() -> None:
    unknown = {
        name: unknown_settings(env_of(svc))
        for name, svc in project_services().items()
        if unknown_settings(env_of(svc))
    }
    assert unknown == {}, "settings the code does not read"


def test_compose_project_services_share_their_settings() -> None:
    # Topics, workers and simulator must agree on partitions, topic names, app id; each has its
    # own credentials (tests/unit/deploy/test_deploy_access.py checks those).
    envs = {
        name: {k: v for k, v in env_of(svc).items() if k not in SECRET_SETTINGS}
        for name, svc in project_services().items()
    }
    first = next(iter(envs.values()))
    assert all(env == first for env in envs.values()), envs


def test_compose_hosts_are_services() -> None:
    env = env_of(services()["worker-1"])
    kafka_env = env_of(services()["kafka"])
    assert (
        kafka_env["KAFKA_ADVERTISED_LISTENERS"]
        == f"{env['KAFKA_SECURITY_PROTOCOL']}://{env['KAFKA_BOOTSTRAP_SERVERS']}"
    )
    assert kafka_env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    redis = urlsplit(env["REDIS_URL"])
    assert redis.hostname in services()
    assert env["KAFKA_BOOTSTRAP_SERVERS"].split(":")[0] in services()


def test_compose_worker_ports() -> None:
    host_ports: list[str] = []
    for name, svc in worker_services().items():
        port = env_of(svc)["SKILLSTREAM_WEB_PORT"]
        assert [str(p) for p in svc.get("expose", [])] == [port], name
        for mapping in svc.get("ports", []):
            *host, container = str(mapping).split(":")
            assert container == port, f"{name} publishes {container}, serves {port}"
            host_ports.append(":".join(host))
    assert len(host_ports) == len(set(host_ports)), f"host ports collide: {host_ports}"


def mounts(svc: dict[str, Any]) -> dict[str, str]:
    """target -> source of a service's short-syntax volumes."""
    result = {}
    for spec in svc.get("volumes", []):
        source, target, *_ = str(spec).split(":")
        result[target] = source
    return result


def test_compose_volumes() -> None:
    declared = set(compose().get("volumes") or {})
    used: set[str] = set()
    for name, svc in services().items():
        for source in mounts(svc).values():
            if source.startswith((".", "/")):
                assert (ROOT / source).exists(), f"{name}: bind source {source} is missing"
            else:
                assert source in declared, f"{name}: volume {source} not declared"
                used.add(source)
    assert used == declared, f"declared but unused: {declared - used}"
    data_dir = env_of(services()["worker-1"]).get(
        "SKILLSTREAM_DATA_DIR", image_env()["SKILLSTREAM_DATA_DIR"]
    )
    data_volumes = [mounts(svc).get(data_dir) for svc in worker_services().values()]
    assert None not in data_volumes, f"a worker has no volume at {data_dir}"
    assert len(set(data_volumes)) == len(data_volumes), "workers share a RocksDB volume"


def test_compose_modes_file_is_mounted_where_the_setting_points() -> None:
    for name, svc in project_services().items():
        modes_file = env_of(svc).get("SKILLSTREAM_MODES_FILE")
        if modes_file:
            source = mounts(svc).get(modes_file)
            assert source, f"{name}: nothing mounted at {modes_file}"
            load_modes(ROOT / source)


def test_compose_start_order() -> None:
    topics = services()["topics"]
    assert topics["command"][:2] == ["topics", "create"]
    assert topics["restart"] == "no"
    assert topics["depends_on"]["kafka"]["condition"] == "service_healthy"
    for svc in worker_services().values():
        assert svc["depends_on"]["topics"]["condition"] == "service_completed_successfully"
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
    for name, svc in services().items():
        deps = svc.get("depends_on") or {}
        for dep, how in deps.items() if isinstance(deps, dict) else []:
            assert dep in services(), f"{name} depends on unknown {dep}"
            if how.get("condition") == "service_healthy":
                assert "test" in services()[dep].get("healthcheck", {}), f"{dep}: no healthcheck"


def test_compose_simulator() -> None:
    simulator = services()["simulator"]
    assert simulator["profiles"] == ["simulator"]
    assert simulator["command"][:2] == ["simulate", "--kafka"]


def test_prometheus_scrapes_every_worker() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))
    (job_config,) = config["scrape_configs"]
    assert job_config.get("metrics_path", "/metrics") == "/metrics"
    targets = {t for sc in job_config["static_configs"] for t in sc["targets"]}
    expected = {
        f"{name}:{env_of(svc)['SKILLSTREAM_WEB_PORT']}" for name, svc in worker_services().items()
    }
    assert targets == expected
    prometheus = mounts(services()["prometheus"])
    assert prometheus["/etc/prometheus/prometheus.yml"] == "./deploy/prometheus/prometheus.yml"


# --- Kubernetes ---------------------------------------------------------------------------------


def test_kustomization_lists_every_manifest() -> None:
    on_disk = {p.name for p in DEPLOY.glob("*.y*ml")} - NOT_APPLIED
    assert set(kustomization()["resources"]) == on_disk
    assert "secret.example.yaml" not in kustomization()["resources"]
    assert kustomization()["namespace"] == kind("Namespace")["metadata"]["name"]


def test_kustomization_modes_generator_parses() -> None:
    (generator,) = [
        g for g in kustomization()["configMapGenerator"] if g["name"] == "skillstream-modes"
    ]
    assert generator["files"]
    for file in generator["files"]:
        assert load_modes(DEPLOY / file.split("=")[-1]).listed


def test_configmap_names_are_known_settings() -> None:
    assert unknown_settings(settings_configmap()) == []


def test_configmap_holds_no_secrets() -> None:
    assert not SECRET_SETTINGS & set(settings_configmap())


def test_example_secrets() -> None:
    secret = manifests()[("Secret", "skillstream-secrets")]
    assert set(secret["stringData"]) == SECRET_SETTINGS
    assert unknown_settings(secret["stringData"]) == []
    # The topic Job's own Kafka user: no Redis.
    topics = manifests()[("Secret", "skillstream-topics-secrets")]
    assert set(topics["stringData"]) == {"KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"}


def test_statefulset_selects_its_pods() -> None:
    spec = statefulset()["spec"]
    assert selects(spec["selector"]["matchLabels"], spec["template"]["metadata"]["labels"])


def test_statefulset_probes_use_the_web_port() -> None:
    container = only_container(statefulset())
    assert container["args"] == ["worker"]
    assert web_port() in [p["containerPort"] for p in container["ports"]]
    probes = {k: v for k, v in container.items() if k.endswith("Probe")}
    assert {"readinessProbe", "livenessProbe"} <= set(probes)
    for name, probe in probes.items():
        # Readiness waits for recovery and rebalances (/ready); the others only ask whether
        # the worker answers (/health), so a long recovery never gets it restarted.
        expected = "/ready" if name == "readinessProbe" else "/health"
        assert probe["httpGet"]["path"] == expected, name
        assert container_port(container, probe["httpGet"]["port"]) == web_port(), name
    liveness = probes["livenessProbe"]
    # Generous: a rebalance or a slow broker must not get a worker killed.
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 120


def test_statefulset_replicas_fit_the_partitions() -> None:
    # More workers than partitions only adds idle workers.
    assert statefulset()["spec"]["replicas"] <= int(settings_configmap()["SKILLSTREAM_PARTITIONS"])


def test_statefulset_data_volume() -> None:
    spec = statefulset()["spec"]
    container = only_container(statefulset())
    data_dir = settings_configmap()["SKILLSTREAM_DATA_DIR"]
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == data_dir]
    claims = {c["metadata"]["name"] for c in spec["volumeClaimTemplates"]}
    assert mount["name"] in claims


@pytest.mark.parametrize("workload", ["StatefulSet", "Job"])
def test_workload_settings_and_modes_mount(workload: str) -> None:
    obj = kind(workload)
    pod = obj["spec"]["template"]["spec"]
    container = only_container(obj)
    sources = container["envFrom"]
    assert sources[0]["configMapRef"]["name"] == "skillstream-config"
    # Each workload its own credentials: the workers' and the Job's (an administrator's).
    secret = {"StatefulSet": "skillstream-secrets", "Job": "skillstream-topics-secrets"}[workload]
    assert sources[-1]["secretRef"] == {"name": secret, "optional": True}
    modes_file = PurePosixPath(settings_configmap()["SKILLSTREAM_MODES_FILE"])
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == str(modes_file.parent)]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    (generator,) = [
        g for g in kustomization()["configMapGenerator"] if g["name"] == volume["configMap"]["name"]
    ]
    assert modes_file.name in [f.split("=")[0] for f in generator["files"]]


@pytest.mark.parametrize("workload", ["StatefulSet", "Job"])
def test_workload_security(workload: str) -> None:
    obj = kind(workload)
    pod = obj["spec"]["template"]["spec"]
    container = only_container(obj)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == image_uid()
    assert pod["enableServiceLinks"] is False
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    (tmp,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == tmp["name"]]
    assert "emptyDir" in volume
    assert container["image"] in {i["name"] for i in kustomization()["images"]}


def test_services_select_the_workers() -> None:
    sts = statefulset()
    pod_labels = sts["spec"]["template"]["metadata"]["labels"]
    container = only_container(sts)
    headless = manifests()[("Service", sts["spec"]["serviceName"])]
    assert headless["spec"]["clusterIP"] == "None"
    metrics = [
        svc
        for (k, _), svc in manifests().items()
        if k == "Service" and any(p.get("name") == "metrics" for p in svc["spec"]["ports"])
    ]
    assert len(metrics) == 1
    for svc in (headless, *metrics):
        assert selects(svc["spec"]["selector"], pod_labels), svc["metadata"]["name"]
        for port in svc["spec"]["ports"]:
            assert container_port(container, port.get("targetPort", port["port"])) == web_port()
    annotations = metrics[0]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(web_port())
    assert annotations["prometheus.io/path"] == "/metrics"


def test_pdb_selects_the_workers() -> None:
    pdb = kind("PodDisruptionBudget")
    spec = statefulset()["spec"]
    assert pdb["spec"]["selector"]["matchLabels"] == spec["selector"]["matchLabels"]
    assert selects(pdb["spec"]["selector"]["matchLabels"], spec["template"]["metadata"]["labels"])
    assert pdb["spec"]["maxUnavailable"] == 1


def test_job_creates_the_topics_and_is_not_a_worker() -> None:
    spec = job()["spec"]
    container = only_container(job())
    argv = [*container.get("command", []), *container.get("args", [])]
    assert argv[:2] == ["topics", "create"]
    assert all(a == "--principal" for a in argv[2::2]), "only principals after the command"
    assert spec["backoffLimit"] == 6
    assert "ttlSecondsAfterFinished" in spec
    worker_selector = statefulset()["spec"]["selector"]["matchLabels"]
    assert not selects(worker_selector, spec["template"]["metadata"]["labels"])


# --- the commands the deployment runs exist ----------------------------------------------------


def deployed_commands() -> list[list[str]]:
    commands = [svc["command"] for svc in project_services().values()]
    commands += [only_container(kind(k))["args"] for k in ("StatefulSet", "Job")]
    image_cmd = next(rest for kw, rest in final_stage() if kw == "CMD")
    commands.append(json.loads(image_cmd))
    return commands


@pytest.mark.parametrize("argv", deployed_commands(), ids=" ".join)
def test_deployed_command_parses(argv: list[str]) -> None:
    from stream.cli.main import build_parser

    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"`skillstream {' '.join(argv)}` is not a command (exit {exc.code})")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kustomize_builds() -> None:
    out = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    rendered = [d for d in yaml.safe_load_all(out) if d]
    assert {d["metadata"].get("namespace", "skillstream") for d in rendered} == {"skillstream"}
    modes = [d for d in rendered if d["metadata"]["name"].startswith("skillstream-modes-")]
    assert len(modes) == 1, "the generated modes ConfigMap (with its hash suffix)"
    # kustomize rewrote the references to the hashed name
    for d in rendered:
        if d["kind"] in ("StatefulSet", "Job"):
            volumes = d["spec"]["template"]["spec"]["volumes"]
            names = [v["configMap"]["name"] for v in volumes if "configMap" in v]
            assert modes[0]["metadata"]["name"] in names
    # The Prometheus rules, whole and under a fixed name (test_monitoring.py checks the rules).
    (rules,) = [d for d in rendered if d["metadata"]["name"] == "skillstream-prometheus-rules"]
    assert rules["data"]["rules.yml"] == (DEPLOY / "prometheus" / "rules.yml").read_text("utf-8")
