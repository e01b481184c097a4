"""The official AG-UI client against a devhost with the offline models (no model server): the
issue's gibberish-then-answer case. A module of its own, so that its devhost, which shares the
emulators' queues and blob events, is gone before another module's devhost starts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.support import DEV_KEYS, docs, running_devhost, warmed
from tests.e2e.test_official_client import scenario


@pytest.fixture(scope="module")
def offline_host(provisioned: dict[str, str], tmp_path_factory) -> Iterator[str]:
    env = {**provisioned, "API_KEYS": DEV_KEYS}
    with running_devhost(env, tmp_path_factory.mktemp("official-client-offline")) as url:
        yield warmed(url)


def test_gibberish_then_a_clear_answer_is_filed_on_the_answer_offline(
    offline_host: str, cosmos
) -> None:
    """The issue's case, with the offline model: the gibberish before the answer no longer
    drags it down to LOW_CONFIDENCE."""
    seen = scenario(
        offline_host,
        "answer",
        SAID="zxcv bnm ,,, lkjh",
        ANSWER="Call my sister Ana about her birthday party on Saturday",
    )
    (pending,) = seen["asked"]["pending"]
    assert pending["metadata"]["kind"] == "answer"
    filed = seen["filed"]
    assert filed["errors"] == [] and filed["pending"] == []
    assert filed["result"]["outcome"] == "CLASSIFIED" and filed["result"]["bucket"] == "People"
    (inbox,) = docs(cosmos, "Inbox", pending["metadata"]["captureId"])
    assert inbox["title"] == "Call my sister Ana about her birthday party on Saturday"
