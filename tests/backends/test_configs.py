"""Every file in ``collector-config/`` is checked as its server would read it (none of Jaeger,
Tempo, Grafana or the Collector installs here, so none is started): YAML and JSON parse, the
Collector's pipelines name only defined components and use every defined one, compose services,
ports and mounted files match the README and the Collector's endpoints, Grafana's provisioning
points at the Tempo service, every image is pinned."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

CONFIG = Path(__file__).resolve().parents[2] / "collector-config"
README = CONFIG / "README.md"
FLEET_DOC = CONFIG.parent / "docs" / "fleet.md"
YAML_FILES = sorted([*CONFIG.rglob("*.yaml"), *CONFIG.rglob("*.yml")])
COMPOSE_FILES = sorted(p for p in YAML_FILES if p.name in ("docker-compose.yaml", "compose.yaml"))
COLLECTOR_FILES = [
    CONFIG / "otel-collector.yaml",
    CONFIG / "fleet" / "gateway.yaml",
    CONFIG / "fleet" / "sampling.yaml",
]
TEMPO_CONFIG = CONFIG / "tempo" / "tempo.yaml"
KINDS = ("receivers", "processors", "exporters", "connectors", "extensions")
_ENV_DEFAULT = re.compile(r"\$\{env:[A-Z_]+:-([^}]*)\}")


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path}: not a mapping"
    return data


def with_defaults(value: str) -> str:
    """A Collector value with each ``${env:VAR:-default}`` replaced by its default."""
    return _ENV_DEFAULT.sub(lambda m: m.group(1), value)


def rel(path: Path) -> str:
    return path.relative_to(CONFIG).as_posix()


def test_there_are_files_to_check():
    assert len(COMPOSE_FILES) == 3 and all(p.exists() for p in COLLECTOR_FILES)


@pytest.mark.parametrize("path", YAML_FILES, ids=rel)
def test_every_yaml_file_parses(path):
    docs = list(yaml.safe_load_all(path.read_text()))
    assert docs and all(isinstance(d, dict) for d in docs), f"{path}: expected mappings"


@pytest.mark.parametrize("path", sorted(CONFIG.rglob("*.json")), ids=rel)
def test_every_json_file_parses(path):
    assert isinstance(json.loads(path.read_text()), dict)


# --- the Collector ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", COLLECTOR_FILES, ids=rel)
def test_collector_pipelines_use_exactly_the_defined_components(path):
    config = load(path)
    service = config["service"]
    defined = {kind: set(config.get(kind) or {}) for kind in KINDS}
    used: dict[str, set[str]] = {kind: set() for kind in KINDS}
    used["extensions"] = set(service.get("extensions") or [])
    assert service["pipelines"], f"{path}: no pipeline"
    for name, pipeline in service["pipelines"].items():
        assert name.split("/")[0] in ("traces", "metrics", "logs"), name
        assert pipeline.get("receivers") and pipeline.get("exporters"), (
            f"{path}: {name} receives or sends nothing"
        )
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind) or []:
                assert component in defined[kind] or component in defined["connectors"], (
                    f"{path}: pipeline {name} uses {kind[:-1]} {component!r}, which is not defined"
                )
                used["connectors" if component in defined["connectors"] else kind].add(component)
    for kind in KINDS:
        unused = defined[kind] - used[kind]
        assert not unused, f"{path}: {kind} defined but not used: {sorted(unused)}"


@pytest.mark.parametrize("path", COLLECTOR_FILES, ids=rel)
def test_collector_limits_memory_first_and_batches(path):
    for name, pipeline in load(path)["service"]["pipelines"].items():
        processors = pipeline.get("processors") or []
        assert processors[0] == "memory_limiter", f"{path}: {name} must start with the memory limiter"
        if "loadbalancing" not in pipeline["exporters"]:  # the gateway forwards whole, unbatched
            assert "batch" in processors, f"{path}: {name} does not batch"


def test_the_collector_keeps_the_redaction_step():
    config = load(CONFIG / "otel-collector.yaml")
    actions = config["processors"]["attributes/drop-secrets"]["actions"]
    assert {a["key"] for a in actions if a["action"] == "delete"} >= {"http.request.header.authorization"}
    assert "attributes/drop-secrets" in config["service"]["pipelines"]["traces"]["processors"]


def test_the_fleet_balances_by_trace_id_and_keeps_failed_runs():
    gateway = load(CONFIG / "fleet" / "gateway.yaml")
    lb = gateway["exporters"]["loadbalancing"]
    assert lb["routing_key"] == "traceID"
    resolver = lb["resolver"]["dns"]
    sampling = load(CONFIG / "fleet" / "sampling.yaml")
    assert resolver["port"] == int(
        sampling["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].rsplit(":", 1)[1]
    )
    policies = sampling["processors"]["tail_sampling"]["policies"]
    assert any(p["type"] == "status_code" and p["status_code"]["status_codes"] == ["ERROR"] for p in policies)
    assert set(sampling["service"]["pipelines"]["traces"]["exporters"]) == {"otlp/tempo", "otlp/jaeger"}
    text = FLEET_DOC.read_text()
    assert (
        '{ span.agent_trace.session.id = "' in text
        and "fleet/gateway.yaml" in text
        and "fleet/sampling.yaml" in text
    )


# --- compose files ------------------------------------------------------------------------------


def _services(path: Path) -> dict[str, dict]:
    return load(path)["services"]


def _ports(service: dict) -> list[tuple[int, int]]:
    out = []
    for item in service.get("ports") or []:
        host, container = str(item).split("/")[0].rsplit(":", 2)[-2:]
        out.append((int(host), int(container)))
    return out


def _readme_ports() -> set[tuple[str, str, int, int]]:
    rows = set()
    for line in README.read_text().splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[2].isdigit() and cells[3].isdigit():
            rows.add((cells[0], cells[1], int(cells[2]), int(cells[3])))
    return rows


@pytest.mark.parametrize("path", COMPOSE_FILES, ids=rel)
def test_compose_images_are_pinned(path):
    for name, service in _services(path).items():
        image = service["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and "/" not in tag, f"{path}: {name}: image {image!r} has no tag"
        assert tag != "latest" and re.fullmatch(r"\d+\.\d+\.\d+", tag), (
            f"{path}: {name}: {image!r} is not pinned"
        )


def test_compose_ports_are_the_readme_s():
    published = set()
    for path in COMPOSE_FILES:
        for name, service in _services(path).items():
            for host, container in _ports(service):
                published.add((rel(path), name, host, container))
    assert published == _readme_ports()


@pytest.mark.parametrize("path", COMPOSE_FILES, ids=rel)
def test_compose_files_are_started_as_the_readme_says(path):
    assert f"docker compose -f collector-config/{rel(path)} up -d" in README.read_text()
    assert f"docker compose -f collector-config/{rel(path)} up -d" in path.read_text()


@pytest.mark.parametrize("path", COMPOSE_FILES, ids=rel)
def test_compose_mounts_exist_and_named_volumes_are_declared(path):
    compose = load(path)
    declared = set(compose.get("volumes") or {})
    for name, service in compose["services"].items():
        for volume in service.get("volumes") or []:
            source = str(volume).split(":")[0]
            if source.startswith("."):
                assert (path.parent / source).exists(), f"{path}: {name} mounts missing {source}"
                assert rel((path.parent / source).resolve()) in README.read_text()
            else:
                assert source in declared, f"{path}: {name} uses undeclared volume {source}"
        for dep in service.get("depends_on") or []:
            assert dep in compose["services"], f"{path}: {name} depends on unknown {dep}"


def _grpc_port(config: dict) -> int:
    return int(config["distributor"]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].rsplit(":", 1)[1])


def test_the_collector_s_endpoints_are_services_of_its_compose_file():
    services = _services(CONFIG / "docker-compose.yaml")
    collector = services["otel-collector"]
    config = load(CONFIG / "otel-collector.yaml")
    mounts = [str(v).split(":") for v in collector["volumes"]]
    assert ["./otel-collector.yaml", "/etc/otelcol-contrib/config.yaml", "ro"] in mounts
    assert "--config=/etc/otelcol-contrib/config.yaml" in collector["command"]
    listening = {
        int(with_defaults(p["endpoint"]).rsplit(":", 1)[1])
        for p in config["receivers"]["otlp"]["protocols"].values()
    }
    assert {c for _, c in _ports(collector)} >= listening
    container_ports = {
        "jaeger": 4317,
        "tempo": _grpc_port(load(TEMPO_CONFIG)),
    }  # jaeger v2: OTLP gRPC on 4317
    for exporter, target in (("otlp/jaeger", "jaeger"), ("otlp/tempo", "tempo")):
        host, port = with_defaults(config["exporters"][exporter]["endpoint"]).rsplit(":", 1)
        assert host == target and host in services and int(port) == container_ports[target]
        assert host in collector["depends_on"]


# --- Tempo and Grafana --------------------------------------------------------------------------


def test_grafana_provisions_the_tempo_service_and_the_sessions_dashboard():
    tempo_port = load(TEMPO_CONFIG)["server"]["http_listen_port"]
    provisioning = CONFIG / "tempo" / "grafana" / "provisioning"
    sources = load(provisioning / "datasources" / "tempo.yaml")["datasources"]
    (tempo,) = [s for s in sources if s["type"] == "tempo"]
    assert tempo["url"] == f"http://tempo:{tempo_port}"
    for path in (CONFIG / "tempo" / "docker-compose.yaml", CONFIG / "docker-compose.yaml"):
        services = _services(path)
        assert any(c == tempo_port for _, c in _ports(services["tempo"])), (
            f"{path}: Tempo's API not published"
        )
        assert "tempo" in services["grafana"]["depends_on"]
    providers = load(provisioning / "dashboards" / "agent-sessions.yaml")["providers"]
    dashboard_dir = providers[0]["options"]["path"]
    grafana = _services(CONFIG / "tempo" / "docker-compose.yaml")["grafana"]
    assert any(str(v).split(":")[1] == dashboard_dir for v in grafana["volumes"])
    dashboard = json.loads((CONFIG / "tempo" / "grafana" / "dashboards" / "agent-sessions.json").read_text())
    queries = [t["query"] for panel in dashboard["panels"] for t in panel["targets"]]
    assert all(
        t["datasource"]["uid"] == tempo["uid"] for panel in dashboard["panels"] for t in panel["targets"]
    )
    assert '{ span.agent_trace.session.id = "$session" }' in " ".join(queries)
    shown = " ".join(queries)
    for attribute in (
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.request.model",
        "agent_trace.unfinished",
    ):
        assert f"span.{attribute}" in shown, f"the dashboard does not show {attribute}"
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["session"]


def test_tempo_takes_otlp_on_the_ports_compose_publishes():
    config = load(TEMPO_CONFIG)
    protocols = config["distributor"]["receivers"]["otlp"]["protocols"]
    tempo = _services(CONFIG / "tempo" / "docker-compose.yaml")["tempo"]
    published = {c for _, c in _ports(tempo)}
    assert {int(p["endpoint"].rsplit(":", 1)[1]) for p in protocols.values()} <= published
    assert all(p["endpoint"].startswith("0.0.0.0:") for p in protocols.values()), (
        "reachable from other containers"
    )
    assert ["./tempo.yaml", "/etc/tempo.yaml", "ro"] in [str(v).split(":") for v in tempo["volumes"]]
