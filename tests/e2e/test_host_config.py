"""host.json and local.settings.json are read the way the host reads them."""

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from devhost.config import load_host_config, load_local_settings, parse_timespan
from devhost.cors import CorsConfigError, CorsPolicy, cors_policy
from devhost.routes import compile_route
from devhost.webapp import WEB_PORT

REPO = Path(__file__).resolve().parents[2]


def test_timespans() -> None:
    assert parse_timespan("00:00:02") == timedelta(seconds=2)
    assert parse_timespan("1.02:03:04.5") == timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    with pytest.raises(ValueError):
        parse_timespan("2 seconds")


def test_local_settings_do_not_override_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALREADY_SET", "from-env")
    monkeypatch.delenv("ONLY_IN_FILE", raising=False)
    values = {"ALREADY_SET": "from-file", "ONLY_IN_FILE": "file"}
    (tmp_path / "local.settings.json").write_text(json.dumps({"Values": values}))
    applied = load_local_settings(tmp_path)
    assert os.environ["ALREADY_SET"] == "from-env"
    assert os.environ["ONLY_IN_FILE"] == "file"
    assert applied == {"ONLY_IN_FILE": "file"}
    monkeypatch.delenv("ONLY_IN_FILE")


def test_host_json_queue_options_and_defaults(tmp_path: Path) -> None:
    (tmp_path / "host.json").write_text(
        json.dumps({"version": "2.0", "extensions": {"queues": {"batchSize": 8}}})
    )
    config = load_host_config(tmp_path)
    assert config.route_prefix == "api"
    assert config.queues.batch_size == 8
    assert config.queues.threshold == 4  # half the batch size, as the host defaults it
    assert config.queues.max_dequeue_count == 5
    assert config.queues.max_polling_interval == timedelta(minutes=1)


def test_app_settings_override_host_json_and_the_lease_is_the_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "host.json").write_text(
        json.dumps({"version": "2.0", "extensions": {"queues": {"maxDequeueCount": 5}}})
    )
    assert load_host_config(tmp_path).queues.lease == timedelta(minutes=10)
    # Case-insensitive, as the host's configuration reads them; new keys are added.
    monkeypatch.setenv("AzureFunctionsJobHost__Extensions__Queues__MAXDEQUEUECOUNT", "2")
    monkeypatch.setenv("AzureFunctionsJobHost__extensions__queues__visibilityTimeout", "00:00:01")
    monkeypatch.setenv("AzureFunctionsJobHost__extensions__http__routePrefix", "v1")
    monkeypatch.setenv("DEVHOST_QUEUE_LEASE_S", "3")
    config = load_host_config(tmp_path)
    assert config.queues.max_dequeue_count == 2 == config.blobs.max_dequeue_count
    assert config.queues.visibility_timeout == timedelta(seconds=1)
    assert config.route_prefix == "v1"
    assert config.queues.lease == timedelta(seconds=3)


def test_the_repo_host_json_is_valid_for_the_host() -> None:
    config = load_host_config(REPO)
    assert config.route_prefix == "api"
    assert config.queues.message_encoding == "base64"


def test_route_templates() -> None:
    route = compile_route("captures/{id}/events")
    assert route.match("captures/abc/events") == {"id": "abc"}
    assert route.match("captures/a/b/events") is None
    assert compile_route("inbox/{page?}").match("inbox") == {}
    assert compile_route("n/{x:int}").match("n/ab") is None
    with pytest.raises(ValueError):
        compile_route("a/{opt?}/b")


def test_cors_is_the_host_section_of_local_settings_unless_the_command_line_says(
    tmp_path: Path,
) -> None:
    assert cors_policy(tmp_path) is None  # no file: no CORS, as `func start` without --cors
    host = {"cors": " HTTP://App.Example:7072 ,http://b.example", "CorsCredentials": "true"}
    (tmp_path / "local.settings.json").write_text(json.dumps({"Host": host}))
    # Keys case-insensitive, as Core Tools reads them; origins lower-cased as ASP.NET Core.
    policy = cors_policy(tmp_path)
    assert policy == CorsPolicy(("http://app.example:7072", "http://b.example"), credentials=True)
    assert cors_policy(tmp_path, origins="http://c.example") == CorsPolicy(
        ("http://c.example",), credentials=True
    )
    assert cors_policy(tmp_path, credentials=False) == CorsPolicy(policy.origins, False)
    assert cors_policy(tmp_path, origins="") is None


def test_cors_policies_the_host_would_not_take_are_refused() -> None:
    with pytest.raises(CorsConfigError, match="CORSCredentials"):
        CorsPolicy(("*",), credentials=True)
    with pytest.raises(CorsConfigError, match="stand alone"):
        CorsPolicy(("*", "http://a.example"))
    assert CorsPolicy(("*",)).allows("http://anyone.example")
    assert not CorsPolicy(("http://a.example",)).allows("")


def test_the_sample_settings_let_the_served_web_app_call_the_api(tmp_path: Path) -> None:
    (tmp_path / "local.settings.json").write_text((REPO / "local.settings.sample.json").read_text())
    policy = cors_policy(tmp_path)
    assert policy is not None and not policy.credentials and not policy.any_origin
    assert policy.allows(f"http://127.0.0.1:{WEB_PORT}")
    assert policy.allows(f"http://localhost:{WEB_PORT}")  # the same page, opened by name
