"""Requests the local Cosmos server served, by kind (read, create, replace, upsert, query,
delete, metadata): devhost/cosmos_launcher.js counts them, since it reports no request charge."""

from __future__ import annotations

import httpx


def cosmos_requests(endpoint: str) -> dict[str, int]:
    # The local server's self-signed certificate, on loopback.
    return httpx.get(f"{endpoint.rstrip('/')}/_requests", verify=False, timeout=10).json()


def since(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0)}
