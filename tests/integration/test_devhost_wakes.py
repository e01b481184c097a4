"""The devhost wakes a queue's listener when a message the app sent becomes visible: at once,
or when one sent hidden comes due, and never for one the app deleted first (issue 32), against
Azurite. In a process of its own, since the watch patches the queue SDK for the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from devhost.emulators import REPO

SCRIPT = r"""
import asyncio, json, sys, time
from azure.storage.queue.aio import QueueClient
from devhost.queues import watch_app_enqueues

async def main(conn):
    start = time.monotonic()
    woken = []
    watch_app_enqueues(lambda name: woken.append((name, round(time.monotonic() - start, 2))))
    async with QueueClient.from_connection_string(conn, "devhost-wakes") as queue:
        try:
            await queue.create_queue()
        except Exception:
            pass
        await queue.send_message("now")
        await queue.send_message("later", visibility_timeout=1)
        deleted = await queue.send_message("deleted", visibility_timeout=1)
        await queue.delete_message(deleted)
        await asyncio.sleep(2)
        await queue.delete_queue()
    print(json.dumps(woken))

asyncio.run(main(sys.argv[1]))
"""


def test_the_app_s_messages_wake_their_listener_when_visible_and_deleted_ones_never(
    provisioned: dict[str, str], storage_conn: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, storage_conn],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    woken = json.loads(done.stdout.strip().splitlines()[-1])
    assert [name for name, _ in woken] == ["devhost-wakes", "devhost-wakes"]
    (_, at_once), (_, due) = woken
    assert at_once < 1.0 <= due < 1.9
