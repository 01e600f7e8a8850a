"""Cases as Ray tasks on a local Ray cluster the test starts (`ray start --head`),
reached by its address as an existing cluster would be: the same figures as in
this process, each case run once."""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay import ConfigurationError, ControlPlane
from assay.cli._eval import eval_app
from assay.evals import evaluate
from assay.verifier import LexicalNLI, Verifier
from tests.evals import _desk

# Looked up, not imported: Ray reads its settings (RAY_AUTH_MODE) when first imported.
if importlib.util.find_spec("ray") is None:
    pytest.skip(
        "the ray extra is not installed (pip install 'assay[ray]')", allow_module_level=True
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module", autouse=True)
def ray_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The cluster runs with token authentication, as Ray advises for any cluster: the
    test writes a token and hands it to the head and to this driver. (Ray 2.5x turned
    it on in `ray start` by itself; 2.60 asks for it.) Ray reads these settings once,
    when it is first imported in a process, so they are in the environment before any
    test of this module runs, whichever runs first: the one that only imports Ray too."""
    token = tmp_path_factory.mktemp("ray") / "auth_token"
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    saved = {name: os.environ.get(name) for name in auth}
    os.environ.update(auth)
    try:
        yield auth
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def ray_address(ray_token: dict[str, str]) -> Iterator[str]:
    ray = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # The actors import the test's graph factory from the repository.
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    start = [ray, "start", "--head", f"--port={port}", "--num-cpus=2"]
    start += ["--include-dashboard=false", "--disable-usage-stats"]
    start += ["--object-store-memory=200000000"]
    subprocess.run(start, check=True, env={**env, **ray_token}, capture_output=True, timeout=120)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run(
            [ray, "stop", "--force"], env={**env, **ray_token}, capture_output=True, timeout=120
        )


def test_cases_run_as_ray_tasks_give_the_figures_of_a_local_run(
    ray_address: str, suite_file: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ray.db'}"
    done: list[str] = []
    on_ray = evaluate(
        suite_file,
        _desk.graph,
        database_url=url,
        jobs=2,
        ray=ray_address,
        nli=LexicalNLI(),
        judge=None,
        on_case=lambda run: done.append(run.case_id),
    )
    here = evaluate(
        suite_file,
        _desk.graph,
        database_url=f"sqlite:///{tmp_path / 'here.db'}",
        nli=LexicalNLI(),
        judge=None,
    )
    assert sorted(done) == sorted(c.case_id for c in here.cases)
    assert (on_ray.graph_name, on_ray.graph_version) == (here.graph_name, here.graph_version)
    assert on_ray.metrics.gated() == here.metrics.gated()
    assert [c.outcome() for c in on_ray.cases] == [c.outcome() for c in here.cases]
    # every case ran once, each in its own run, in the one database the actors shared
    with ControlPlane.open(url) as cp:
        assert len(cp.ledger.runs()) == len(here.cases)


def test_an_unreachable_cluster_is_one_clear_error(suite_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="Ray cluster"):
        evaluate(
            suite_file,
            _desk.graph,
            database_url=f"sqlite:///{tmp_path / 'x.db'}",
            jobs=2,
            ray=f"127.0.0.1:{_free_port()}",
            nli=LexicalNLI(),
            judge=None,
        )


def test_the_command_runs_on_the_cluster_and_refuses_one_it_cannot_reach(
    ray_address: str, suite_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver's meaning judge is the stand-in; the actors load the shipped model.
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    common = [str(suite_file), "--graph", "tests.evals._desk:graph", "--db", url, "--jobs", "2"]
    done = CliRunner().invoke(eval_app, [*common, "--ray", ray_address])
    assert done.exit_code == 0, done.output
    assert "recorded as evr_" in done.output
    refused = CliRunner().invoke(eval_app, [*common, "--ray", f"127.0.0.1:{_free_port()}"])
    assert refused.exit_code == 2
    assert "cannot reach the Ray cluster" in refused.output and "Traceback" not in refused.output
