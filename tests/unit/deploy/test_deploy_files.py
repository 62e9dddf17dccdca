"""deploy/ without a docker engine: the compose file, the Dockerfile, Prometheus and Grafana
provisioning are checked for structure and for consistency with each other and the code.

(test_compose_safe.py reads the compose file through `docker-compose config`; promtool
and a real Prometheus run in tests/integration.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli import build_parser
from nuggetflow.settings import Settings
from stream.metrics import WorkerMetrics as Metrics

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "nuggetflow.json"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = load(COMPOSE)
    assert isinstance(data, dict)
    return data


def cli_commands() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return set(sub.choices or {})


def test_compose_has_every_component(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"kafka", "opensearch", "query", "worker", "ingest",
                                        "prometheus", "grafana", "console"}
    for name, svc in compose["services"].items():
        assert "image" in svc or "build" in svc, name


def test_compose_files_and_build_context_exist(compose: dict[str, Any]) -> None:
    for name, svc in compose["services"].items():
        build = svc.get("build")
        if build:
            context = (DEPLOY / build["context"]).resolve()
            assert context.is_dir(), name
            assert (context / build["dockerfile"]).is_file(), name
        for volume in svc.get("volumes", []):
            # ${VAR:-default}:...: the default must exist
            volume = re.sub(r"^\$\{\w+:-([^}]*)\}", r"\1", volume)
            source = volume.split(":")[0]
            if source.startswith((".", "/")):
                assert (DEPLOY / source).exists(), f"{name}: {source} does not exist"
            else:
                assert source in compose["volumes"], f"{name}: volume {source} not declared"


def test_compose_ports_are_valid_and_distinct(compose: dict[str, Any]) -> None:
    host_ports: list[int] = []
    for name, svc in compose["services"].items():
        for mapping in svc.get("ports", []):
            bind, host, container = str(mapping).rsplit(":", 2)
            assert bind == "${NUGGETFLOW_BIND:-127.0.0.1}", (name, mapping)
            assert 0 < int(host) < 65536 and 0 < int(container) < 65536, name
            host_ports.append(int(host))
    assert len(host_ports) == len(set(host_ports)), "two services publish one host port"
    query = compose["services"]["query"]
    env = query["environment"]
    grpc = env["NUGGETFLOW_GRPC_PORT"]
    assert query["ports"] == [f"${{NUGGETFLOW_BIND:-127.0.0.1}}:{grpc}:{grpc}"]


def test_compose_dependencies_and_commands(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, svc in services.items():
        for dep in svc.get("depends_on", []):
            assert dep in services, f"{name} depends on unknown {dep}"
    commands = cli_commands()
    for name in ("query", "worker", "ingest", "console"):
        command = services[name]["command"][0]
        assert command in commands, (name, command)
        test = services[name].get("healthcheck", {}).get("test", [])
        if test[1:2] == ["nuggetflow"]:  # ["CMD", "nuggetflow", <command>, ...]
            assert test[2] in commands, (name, test)
    assert services["query"]["command"] == ["serve"]
    assert services["ingest"]["command"][0] == "ingest"
    for name in ("worker", "ingest", "console"):
        assert services[name]["image"] == services["query"]["image"], "one image, built once"
    grpc_port = services["query"]["environment"]["NUGGETFLOW_GRPC_PORT"]
    assert services["console"]["environment"]["NUGGETFLOW_CONSOLE_GRPC_TARGET"] == \
        f"query:{grpc_port}", "the console is a client of the query service"


def test_compose_environment_names_real_settings(compose: dict[str, Any]) -> None:
    known = {var for var, _, _ in Settings.describe()}
    for name in ("query", "worker", "ingest", "console"):
        for var in compose["services"][name]["environment"]:
            assert var in known, f"{name}: {var} is not a setting"


def test_dockerfile_copies_existing_paths_and_runs_the_cli() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    copies = re.findall(r"^COPY\s+(.+?)\s+\S+$", text, flags=re.M)
    assert copies
    for sources in copies:
        for src in sources.split():
            assert (ROOT / src).exists(), f"COPY source {src} missing"
    assert 'ENTRYPOINT ["nuggetflow"]' in text and 'CMD ["serve"]' in text
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    for sources in copies:
        for src in sources.split():
            assert f"!{src.rstrip('/')}" in ignore or f"!{src.rstrip('/')}/" in ignore, src


def scrape_targets(config: dict[str, Any],
                   base: Path = DEPLOY / "prometheus") -> dict[str, list[str]]:
    """Targets per job: static ones, DNS discovery's names with its port, and those of file
    discovery (the files a job's glob names, relative to the config's folder)."""
    out: dict[str, list[str]] = {}
    for job in config["scrape_configs"]:
        targets = [t for sc in job.get("static_configs", []) for t in sc["targets"]]
        for sd in job.get("dns_sd_configs", []):  # every address of a compose service
            targets += [f"{name}:{sd['port']}" for name in sd["names"]]
        for sd in job.get("file_sd_configs", []):
            files = [f for pattern in sd["files"] for f in sorted(base.glob(pattern))]
            assert files, f"{job['job_name']}: no file matches {sd['files']}"
            targets += [t for f in files for group in json.loads(f.read_text())
                        for t in group["targets"]]
        out[job["job_name"]] = targets
    return out


def test_prometheus_configs_scrape_the_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    in_compose = scrape_targets(load(DEPLOY / "prometheus" / "prometheus.compose.yml"))
    local = scrape_targets(load(DEPLOY / "prometheus" / "prometheus.yml"))
    assert set(in_compose) == set(local) == {"nuggetflow-query", "nuggetflow-worker",
                                             "prometheus"}
    for job in ("nuggetflow-query", "nuggetflow-worker"):
        # one target per worker process: NUGGETFLOW_METRICS_PORT + i, each port published
        env = services[in_compose[job][0].split(":")[0]]["environment"]
        first, workers = int(env["NUGGETFLOW_METRICS_PORT"]), int(
            env.get("NUGGETFLOW_SERVE_WORKERS", "1"))
        hosts = {t.split(":")[0] for t in in_compose[job]}
        assert len(hosts) == 1
        assert sorted(int(t.split(":")[1]) for t in in_compose[job]) == list(
            range(first, first + workers))
        # /metrics stays on the internal network: never published on the host
        published = {p.rsplit(":", 2)[1] for s in services.values() for p in s.get("ports", [])}
        assert not {str(p) for p in range(first, first + workers)} & published, job
    assert local["nuggetflow-query"] == [f"127.0.0.1:{Settings().metrics_port}"]
    mounted = [v for v in services["prometheus"]["volumes"] if "alerts.yml" in v]
    assert mounted and (DEPLOY / mounted[0].split(":")[0]).is_file()


def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def exprs() -> list[tuple[str, str]]:
    """(panel title, PromQL expression) for every target of every panel."""
    return [(p["title"], t["expr"]) for p in dashboard()["panels"] for t in p.get("targets", [])]


def test_grafana_provisioning_points_at_prometheus_and_the_dashboards(
        compose: dict[str, Any]) -> None:
    ds = load(DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml")
    (source,) = ds["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    providers = load(DEPLOY / "grafana" / "provisioning" / "dashboards" / "dashboards.yml")
    path = providers["providers"][0]["options"]["path"]
    mounts = dict(v.split(":")[:2] for v in compose["services"]["grafana"]["volumes"])
    assert mounts["./grafana/dashboards"] == path
    assert (DEPLOY / "grafana" / "dashboards" / "nuggetflow.json").is_file()
    variable = next(v for v in dashboard()["templating"]["list"] if v["type"] == "datasource")
    assert variable["current"]["value"] == source["uid"]


def test_dashboard_panels_are_well_formed() -> None:
    panels = dashboard()["panels"]
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for p in panels:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"])
                for y in range(g["y"], g["y"] + g["h"])}
        assert not mine & cells, f"{p['title']} overlaps another panel"
        cells |= mine
        if p["type"] != "row":
            assert p["targets"] and all(t["expr"].strip() for t in p["targets"]), p["title"]
    titles = " | ".join(p["title"] for p in panels).lower()
    for wanted in ("retrieval rate", "citation rate", "p50", "p99", "ino pass rate",
                   "iterations", "cost", "consumer lag", "dead letters"):
        assert wanted in titles, wanted


def test_dashboard_uses_only_metrics_the_code_declares() -> None:
    registry = Metrics.create().registry  # a worker's: every group
    declared: set[str] = {"up"}
    for family in registry.collect():
        declared.add(family.name)
        declared.update(s.name for s in family.samples)
    # series that exist only once a labelled child is created
    for family in registry.collect():
        if family.type == "counter":
            declared.add(family.name + "_total")
        if family.type == "histogram":
            declared.update(family.name + s for s in ("_bucket", "_sum", "_count"))
    functions = {"sum", "rate", "increase", "histogram_quantile", "by", "max", "and", "on"}
    for title, expr in exprs():
        without_strings = re.sub(r'"[^"]*"', "", expr)
        without_labels = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\([a-z_, ]*\)(?=\s*\()", "",
                                without_strings)
        names = set(re.findall(r"[a-z_][a-z0-9_]*", without_labels)) - functions
        names -= {"le", "tenant", "method", "role", "group", "topic", "agent", "reason",
                  "outcome", "direction"}
        assert names, (title, expr)
        unknown = names - declared
        assert not unknown, f"{title}: {unknown} are not declared in query.metrics"
