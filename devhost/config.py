"""Host configuration: local.settings.json into the environment, host.json into options.

As in the real host, app settings named `AzureFunctionsJobHost__<path>` override host.json
values (e.g. `AzureFunctionsJobHost__extensions__queues__maxDequeueCount=2`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

_OVERRIDE_PREFIX = "AzureFunctionsJobHost__"
# The real host leases a message for 10 minutes while its function runs (renewing it halfway);
# DEVHOST_QUEUE_LEASE_S shortens that locally, so a test can see a killed host's message return.
_LEASE_SETTING = "DEVHOST_QUEUE_LEASE_S"

_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?$")


def parse_timespan(value: str) -> timedelta:
    """host.json uses .NET TimeSpan strings: [d.]hh:mm:ss[.fff]."""
    m = _TIMESPAN.match(value.strip())
    if not m:
        raise ValueError(f"not a TimeSpan: {value!r}")
    days, hours, minutes, seconds, frac = m.groups()
    return timedelta(
        days=int(days or 0),
        hours=int(hours),
        minutes=int(minutes),
        seconds=int(seconds),
        microseconds=int((frac or "0")[:6].ljust(6, "0")),
    )


@dataclass(frozen=True)
class QueueOptions:
    """extensions.queues, with the host's defaults."""

    batch_size: int = 16
    new_batch_threshold: int | None = None  # host default: batchSize / 2 (per core)
    visibility_timeout: timedelta = timedelta(0)
    max_polling_interval: timedelta = timedelta(minutes=1)
    max_dequeue_count: int = 5
    message_encoding: str = "base64"
    # Not in host.json: how long a message being processed stays hidden before it is renewed.
    lease: timedelta = timedelta(minutes=10)

    @property
    def threshold(self) -> int:
        if self.new_batch_threshold is not None:
            return self.new_batch_threshold
        return self.batch_size // 2


@dataclass(frozen=True)
class BlobOptions:
    max_degree_of_parallelism: int = 8
    # How often the devhost lists containers; the real host's scan is similar for small containers.
    poll_interval: timedelta = timedelta(seconds=1)
    max_dequeue_count: int = 5


@dataclass(frozen=True)
class SingletonOptions:
    """host.json `singleton`: the listener lock that keeps a timer to one host of an app."""

    listener_lock_period: timedelta = timedelta(minutes=1)
    listener_lock_recovery_polling_interval: timedelta = timedelta(minutes=1)

    def __post_init__(self) -> None:
        # A blob lease lasts 15 to 60 seconds, and the host refuses other periods.
        if not timedelta(seconds=15) <= self.listener_lock_period <= timedelta(minutes=1):
            raise ValueError("host.json singleton.listenerLockPeriod must be 00:00:15 to 00:01:00")


@dataclass(frozen=True)
class McpOptions:
    """extensions.mcp: what the MCP server tells a client it is, with the extension's defaults."""

    server_name: str = "Azure Functions MCP server"
    server_version: str = "1.0.0"
    instructions: str | None = None


@dataclass(frozen=True)
class HostConfig:
    route_prefix: str = "api"
    queues: QueueOptions = field(default_factory=QueueOptions)
    blobs: BlobOptions = field(default_factory=BlobOptions)
    singleton: SingletonOptions = field(default_factory=SingletonOptions)
    mcp: McpOptions = field(default_factory=McpOptions)


def load_local_settings(app_dir: Path) -> dict[str, str]:
    """Export local.settings.json Values without overriding what the environment already has."""
    path = app_dir / "local.settings.json"
    if not path.exists():
        return {}
    values = json.loads(path.read_text()).get("Values", {})
    applied = {}
    for key, value in values.items():
        if key not in os.environ:
            os.environ[key] = str(value)
            applied[key] = str(value)
    return applied


def load_host_config(app_dir: Path) -> HostConfig:
    raw = json.loads((app_dir / "host.json").read_text())
    if raw.get("version") != "2.0":
        raise ValueError("host.json must have version 2.0")
    apply_overrides(raw, os.environ)
    ext = raw.get("extensions", {})
    http = ext.get("http", {})
    q = ext.get("queues", {})
    b = ext.get("blobs", {})
    queues = QueueOptions(
        batch_size=int(q.get("batchSize", 16)),
        new_batch_threshold=int(q["newBatchThreshold"]) if "newBatchThreshold" in q else None,
        visibility_timeout=parse_timespan(q.get("visibilityTimeout", "00:00:00")),
        max_polling_interval=parse_timespan(q.get("maxPollingInterval", "00:01:00")),
        max_dequeue_count=int(q.get("maxDequeueCount", 5)),
        message_encoding=str(q.get("messageEncoding", "base64")).lower(),
        lease=timedelta(seconds=float(os.environ.get(_LEASE_SETTING, 600))),
    )
    # Blob triggers retry through the host's queues, so they share maxDequeueCount.
    blobs = BlobOptions(
        max_degree_of_parallelism=int(b.get("maxDegreeOfParallelism", 8)),
        max_dequeue_count=queues.max_dequeue_count,
    )
    lock = raw.get("singleton", {})
    singleton = SingletonOptions(
        listener_lock_period=parse_timespan(lock.get("listenerLockPeriod", "00:01:00")),
        listener_lock_recovery_polling_interval=parse_timespan(
            lock.get("listenerLockRecoveryPollingInterval", "00:01:00")
        ),
    )
    m = ext.get("mcp", {})
    mcp = McpOptions(
        server_name=str(m.get("serverName", McpOptions.server_name)),
        server_version=str(m.get("serverVersion", McpOptions.server_version)),
        instructions=m.get("instructions"),
    )
    return HostConfig(
        route_prefix=str(http.get("routePrefix", "api")).strip("/"),
        queues=queues,
        blobs=blobs,
        singleton=singleton,
        mcp=mcp,
    )


def apply_overrides(raw: dict, settings: Mapping[str, str]) -> None:
    """Set `AzureFunctionsJobHost__a__b` app settings into raw["a"]["b"], matching existing
    keys case-insensitively as the host's configuration does."""
    for name, value in settings.items():
        if not name.lower().startswith(_OVERRIDE_PREFIX.lower()):
            continue
        *parents, leaf = name[len(_OVERRIDE_PREFIX) :].split("__")
        node = raw
        for key in parents:
            key = _existing_key(node, key)
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[_existing_key(node, leaf)] = value


def _existing_key(node: dict, key: str) -> str:
    return next((k for k in node if k.lower() == key.lower()), key)


def is_disabled(function_name: str, settings: Mapping[str, str]) -> bool:
    """As the host reads `AzureWebJobs.<FUNCTION_NAME>.Disabled`: such a function is not
    started (no listener, no route)."""
    value = settings.get(f"AzureWebJobs.{function_name}.Disabled", "")
    return value.strip().lower() in ("true", "1")
