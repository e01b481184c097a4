"""POST /api/capture end to end with a real model server behind OPENAI_BASE_URL: the devhost,
Azurite, the Cosmos server and llama.cpp with SmolLM2-135M (devhost/llama_server.py). The
model picks buckets poorly; the capture must still be settled, streamed as a valid AG-UI run
and stored as its outcome says."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from devhost.llama_server import MODEL_NAME, LlamaServer
from testkit.support import DEV_KEYS, KEY, docs, run_input, running_devhost
from tests.sse import assert_valid_run, post_run

# Where each outcome leaves the capture (docs/contract.md, Outcomes).
STATUS_OF = {
    "CLASSIFIED": "filed",
    "LOW_CONFIDENCE": "needs_review",
    "MISUNDERSTOOD": "needs_clarification",
}


@pytest.fixture(scope="module")
def host(provisioned: dict[str, str], llama: LlamaServer, tmp_path_factory) -> Iterator[str]:
    env = {
        **provisioned,
        "API_KEYS": DEV_KEYS,
        "AZURE_OPENAI_ENDPOINT": "",
        "OPENAI_BASE_URL": llama.base_url,
        "OPENAI_CHAT_MODEL": MODEL_NAME,
        "MODEL_MAX_COMPLETION_TOKENS": "200",
        # One try, but a patient one: the machine is shared and the model has one thread.
        "MODEL_MAX_RETRIES": "0",
        "MODEL_TIMEOUT_S": "120",
    }
    with running_devhost(env, tmp_path_factory.mktemp("llama-capture")) as url:
        yield url


def test_a_capture_is_settled_by_the_real_model(host: str, cosmos) -> None:
    with httpx.Client(base_url=host, timeout=180) as client:
        run = post_run(
            client, "/api/capture", run_input("Call Sarah about the budget review"), headers=KEY
        )

    assert_valid_run(run)
    result = run.last()["result"]
    # Answered by the model, not handed to the worker: the server took our request.
    assert result["outcome"] in STATUS_OF, result
    assert result["status"] == STATUS_OF[result["outcome"]]
    value = run.custom()["value"]
    assert run.custom()["name"] == result["outcome"]
    (inbox,) = docs(cosmos, "Inbox", value["inboxItemId"])
    assert inbox["status"] == result["status"]
    assert inbox["text"] == "Call Sarah about the budget review"
    if result["outcome"] == "MISUNDERSTOOD":
        assert value["questionText"]
    else:
        (filed,) = docs(cosmos, value["bucket"], value["inboxItemId"])
        assert filed["userId"] == "dev"
