"""`python -m devhost check|serve|stack|vapid`: validate, serve, or run the whole local stack;
or give local.settings.json a VAPID key pair for Web Push."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

from .emulators import REPO, Emulators, Ports
from .host import DevHost, load
from .loader import AppLoadError


class FieldsFormatter(logging.Formatter):
    """Appends a record's structured fields (what `extra=` or the app's record factory put
    there, e.g. capture_id and user_id) as key=value: what Azure shows as custom dimensions."""

    _STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}

    def formatMessage(self, record: logging.LogRecord) -> str:  # before any traceback
        line = super().formatMessage(record)
        fields = [f"{k}={v}" for k, v in vars(record).items() if k not in self._STANDARD]
        return f"{line} [{' '.join(fields)}]" if fields else line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devhost", description=__doc__)
    parser.add_argument("command", choices=["check", "serve", "stack", "vapid"])
    parser.add_argument("--app-dir", type=Path, default=REPO, help="folder with function_app.py")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("DEVHOST_PORT", 7071)))
    parser.add_argument(
        "--data-dir", type=Path, default=REPO / ".data", help="stack: where emulator data lives"
    )
    parser.add_argument(
        "--print", action="store_true", help="vapid: print a new pair, write nothing"
    )
    args = parser.parse_args(argv)
    if args.command == "vapid":
        from .vapid import main as vapid

        return vapid(args.app_dir.resolve() / "local.settings.json", args.print)
    handler = logging.StreamHandler()
    handler.setFormatter(FieldsFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    # The SDKs log every HTTP request at INFO; the host's own lines are what a developer reads.
    logging.getLogger("azure").setLevel(logging.WARNING)
    app_dir = args.app_dir.resolve()

    if args.command == "stack":
        return _stack(app_dir, args.host, args.port, args.data_dir)
    try:
        config, functions = load(app_dir)
    except AppLoadError as exc:
        print(f"devhost: the app would not load: {exc}", file=sys.stderr)
        return 1
    if args.command == "check":
        for fn in functions:
            print(f"ok  {fn.name:<28} {fn.trigger.type}")
        return 0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(DevHost(app_dir, config, functions).serve(args.host, args.port))
    return 0


def _stack(app_dir: Path, host: str, port: int, data_dir: Path) -> int:
    emulators = Emulators(data_dir=data_dir, ports=Ports.from_env())
    try:
        emulators.start()
    except RuntimeError as exc:
        print(f"devhost: {exc}", file=sys.stderr)
        return 1
    try:
        os.environ.update(emulators.app_settings)  # ours win over local.settings.json
        try:
            config, functions = load(app_dir)
        except AppLoadError as exc:
            print(f"devhost: the app would not load: {exc}", file=sys.stderr)
            return 1
        devhost = DevHost(app_dir, config, functions)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_provision_and_serve(devhost, host, port))
    finally:
        emulators.stop()
    return 0


async def _provision_and_serve(devhost: DevHost, host: str, port: int) -> None:
    from shared.bootstrap import adapters, reset

    from .provision import provision

    await provision()
    # Load the offline models while the server starts, not on the first capture.
    for model in (adapters().classifier, adapters().transcriber):
        warm_up = getattr(model, "warm_up", None)
        if warm_up is not None:
            asyncio.get_running_loop().run_in_executor(None, warm_up)
    base = f"http://{host}:{port}/api"
    print(
        f"\nCapture pipeline running at {base}  (Ctrl-C stops everything)\n"
        f"  dev user: dev   API key: local-dev-key\n"
        f"  curl {base}/health\n"
        f"  curl -N -H 'X-API-Key: local-dev-key' -H 'Content-Type: application/json' \\\n"
        f'    -d \'{{"threadId":"t1","runId":"r1","messages":[{{"id":"m1","role":"user",'
        f'"content":"Call Sarah about the budget review"}}]}}\' {base}/capture\n',
        flush=True,
    )
    try:
        await devhost.serve(host, port)
    finally:
        await reset()


if __name__ == "__main__":
    sys.exit(main())
