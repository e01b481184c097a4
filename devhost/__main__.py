"""`python -m devhost check|serve|stack|eventgrid|vapid|master-key`: validate, serve, or run the
whole local stack; run the local Event Grid publisher against a webhook (the devhost's or
`func start`'s); give local.settings.json a VAPID key pair for Web Push; or give it the host's
master key for the admin endpoint, and print it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from .config import HostConfig, load_local_settings
from .cors import (
    CorsConfigError,
    CorsPolicy,
    cors_policy,
    stack_cors_policy,
    web_app_origins,
)
from .emulators import REPO, Emulators, Ports
from .eventgrid import BlobEventPublisher, Subscription, SubscriptionError, subscriptions_for
from .host import DevHost, load, run
from .loader import AppLoadError, LoadedFunction
from .timer_schedule import TimerSpec
from .webapp import WEB_DIST, WEB_PORT, WebAppServer

# Start-up is timed from here: "Ready in N s" counts the emulators, provisioning and warm-up.
_STARTED = time.monotonic()


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
    parser.add_argument(
        "command", choices=["check", "serve", "stack", "eventgrid", "vapid", "master-key"]
    )
    parser.add_argument("--app-dir", type=Path, default=REPO, help="folder with function_app.py")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("DEVHOST_PORT", 7071)))
    parser.add_argument(
        "--data-dir", type=Path, default=REPO / ".data", help="stack: where emulator data lives"
    )
    parser.add_argument(
        "--web-dir", type=Path, default=WEB_DIST, help="stack: the web app's build to serve"
    )
    parser.add_argument(
        "--web-port",
        type=int,
        default=int(os.environ.get("DEVHOST_WEB_PORT", WEB_PORT)),
        help="stack: the web app's port (a Host.CORS left as the sample's follows it)",
    )
    # As `func start`: these override Host.CORS and Host.CORSCredentials of local.settings.json.
    parser.add_argument(
        "--cors",
        metavar="ORIGINS",
        help="comma-separated CORS origins ('*' for any); '' turns CORS off",
    )
    parser.add_argument(
        "--cors-credentials",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="answer Access-Control-Allow-Credentials: true",
    )
    parser.add_argument(
        "--print", action="store_true", help="vapid: print a new pair, write nothing"
    )
    parser.add_argument(
        "--event-grid",
        action="store_true",
        help="serve: also run the local Event Grid publisher for the app's Event Grid blob "
        "triggers, posting to this host's blobs webhook (stack always does)",
    )
    parser.add_argument(
        "--webhook",
        help="eventgrid: the URL to deliver to, e.g. http://localhost:7071/runtime/webhooks/"
        "blobs?functionName=Host.Functions.voice_note_uploaded",
    )
    parser.add_argument(
        "--container", default="voice-notes", help="eventgrid: the container to watch"
    )
    parser.add_argument(
        "--connection",
        default="AzureWebJobsStorage",
        help="eventgrid: the app setting holding the storage connection string",
    )
    args = parser.parse_args(argv)
    if args.command == "vapid":
        from .vapid import main as vapid

        return vapid(args.app_dir.resolve() / "local.settings.json", args.print)
    if args.command == "master-key":
        from .master_key import main as master_key

        return master_key(args.app_dir.resolve() / "local.settings.json")
    handler = logging.StreamHandler()
    handler.setFormatter(FieldsFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    # The SDKs log every HTTP request at INFO; the host's own lines are what a developer reads.
    logging.getLogger("azure").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the local Event Grid's posts
    app_dir = args.app_dir.resolve()
    try:
        if args.command == "stack":
            web_origins = web_app_origins(args.host, args.web_port)
            cors = stack_cors_policy(app_dir, web_origins, args.cors, args.cors_credentials)
        else:
            cors = cors_policy(app_dir, args.cors, args.cors_credentials)
    except CorsConfigError as exc:
        print(f"devhost: {exc}", file=sys.stderr)
        return 1

    if args.command == "eventgrid":
        if not args.webhook:
            parser.error("eventgrid needs --webhook")
        load_local_settings(app_dir)
        subscription = Subscription(args.container, args.webhook, args.connection)
        with contextlib.suppress(KeyboardInterrupt):
            return asyncio.run(_publish([subscription]))
        return 0

    if args.command == "stack":
        try:
            web = _web_app(args.web_dir, args.host, args.web_port)
        except OSError as exc:
            print(f"devhost: the web app's port {args.web_port}: {exc}", file=sys.stderr)
            return 1
        try:
            web_lines = _web_app_lines(web, args.web_dir, cors)
            code = _stack(app_dir, args.host, args.port, args.data_dir, cors, web_lines)
        finally:
            if web is not None:
                web.stop()
        return _leave_if_warming(code)
    try:
        config, functions = load(app_dir)
    except AppLoadError as exc:
        print(f"devhost: the app would not load: {exc}", file=sys.stderr)
        return 1
    if args.command == "check":
        for fn in functions:
            print(f"ok  {fn.name:<28} {fn.trigger.type}{_timer_line(fn)}")
        return 0
    devhost = _host(app_dir, config, functions, cors)
    if devhost is None:
        return 1
    with contextlib.suppress(KeyboardInterrupt):
        run(_serve(devhost, args.host, args.port, args.event_grid))
    return _leave_if_warming(0)


def _timer_line(function: LoadedFunction) -> str:
    """For a timer, its schedule and next occurrence, so a schedule can be checked by eye."""
    if function.trigger.type != "timerTrigger":
        return ""
    spec = TimerSpec.from_binding(function.trigger.raw)
    upcoming = spec.next_after(datetime.now(UTC))
    shown = upcoming.isoformat() if upcoming else "never"
    return f"  {spec.schedule.expression!r} in {spec.zone}, next {shown}"


async def _serve(devhost: DevHost, host: str, port: int, event_grid: bool) -> None:
    """Serve; with `event_grid`, the local publisher posts to this host's webhooks, as the
    Event Grid subscriptions of the app's blob triggers do in Azure."""
    if not event_grid:
        await devhost.serve(host, port)
        return
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    subscriptions = subscriptions_for(
        devhost.blob_queue.functions.values(), f"http://{local}:{port}"
    )
    publishers = [BlobEventPublisher(s) for s in subscriptions]
    try:
        # Before the host listens: a blob uploaded once it does is told of.
        for publisher in publishers:
            await publisher.prepare()
        tasks = [asyncio.create_task(_publishing(p)) for p in publishers]
        try:
            await devhost.serve(host, port)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for publisher in publishers:
            await publisher.close()


async def _publishing(publisher: BlobEventPublisher) -> None:
    try:
        await publisher.run()
    except SubscriptionError as exc:
        logging.getLogger("devhost").error("local Event Grid: %s", exc)


async def _publish(subscriptions: list[Subscription]) -> int:
    """`python -m devhost eventgrid`: publish until Ctrl-C or SIGTERM, then save what was
    delivered and exit 0.

    The handlers are installed here rather than left to Python's KeyboardInterrupt: a
    process started with SIGINT ignored (as a non-interactive shell starts a background job,
    e.g. `make test &`) inherits that, and Python then never raises KeyboardInterrupt, so the
    publisher would run on after its launcher's Ctrl-C; SIGTERM would kill it unsaved."""
    main = asyncio.current_task()
    assert main is not None
    stopping = False

    def stop() -> None:
        nonlocal stopping
        stopping = True
        main.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    publishers = [BlobEventPublisher(s) for s in subscriptions]
    try:
        for publisher in publishers:
            await publisher.prepare()
        await asyncio.gather(*(p.run(validation_timeout=120) for p in publishers))
    except SubscriptionError as exc:
        print(f"devhost eventgrid: {exc}", file=sys.stderr)
        return 1
    except asyncio.CancelledError:
        if not stopping:
            raise
        logging.getLogger("devhost").info("local Event Grid stopped")
    finally:
        for publisher in publishers:
            await publisher.close()
    return 0


def _log_cors(cors: CorsPolicy | None) -> None:
    if cors is None:
        logging.getLogger("devhost").info("CORS off (no Host.CORS, no --cors)")
        return
    credentials = "with" if cors.credentials else "without"
    logging.getLogger("devhost").info(
        "CORS allows %s, %s credentials", ", ".join(cors.origins), credentials
    )


def _host(
    app_dir: Path, config: HostConfig, functions: list[LoadedFunction], cors: CorsPolicy | None
) -> DevHost | None:
    """The host for `serve` and `stack`, or None once a setting it refuses has been said."""
    _log_cors(cors)
    try:
        return DevHost(app_dir, config, functions, cors)
    except ValueError as exc:
        print(f"devhost: {exc}", file=sys.stderr)
        return None


def _web_app(web_dir: Path, host: str, port: int) -> WebAppServer | None:
    """The web app's server, listening already (so a taken port fails before the emulators
    start), or None when there is no build to serve."""
    if not (web_dir / "index.html").is_file():
        return None
    return WebAppServer(web_dir, host, port).start()


def _web_app_lines(web: WebAppServer | None, web_dir: Path, cors: CorsPolicy | None) -> str:
    if web is None:
        shown = web_dir.relative_to(REPO) if web_dir.is_relative_to(REPO) else web_dir
        return f"  web app: not served, {shown} has no build (`npm run build:web` makes it)\n"
    line = f"  web app: {web.url}\n"
    if cors is None or not cors.allows(web.url):
        line += (
            f"    (its origin {web.url} is not among the CORS origins, so it cannot call the "
            "API: add it to Host.CORS in local.settings.json, or pass --cors)\n"
        )
    return line


def _stack(
    app_dir: Path, host: str, port: int, data_dir: Path, cors: CorsPolicy | None, web_lines: str
) -> int:
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
        devhost = _host(app_dir, config, functions, cors)
        if devhost is None:
            return 1
        with contextlib.suppress(KeyboardInterrupt):
            run(_provision_and_serve(devhost, host, port, cors, web_lines))
    finally:
        emulators.stop()
    return 0


def _leave_if_warming(code: int) -> int:
    """A model still loading (the app's warm-up threads) holds nothing worth saving, and
    finalising the interpreter under its native code can crash: once everything we started
    is stopped, leave at once."""
    warm_up = sys.modules.get("shared.adapters.warm_up")  # only if the app warms models
    if warm_up is not None and warm_up.in_progress():
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    return code


async def _provision_and_serve(
    devhost: DevHost, host: str, port: int, cors: CorsPolicy | None, web_lines: str
) -> None:
    from shared.bootstrap import reset

    from .provision import provision

    await provision(cors.origins if cors else ())
    base = f"http://{host}:{port}/api"
    ready = asyncio.create_task(_announce_when_ready(base, web_lines))
    try:
        await _serve(devhost, host, port, event_grid=True)
    finally:
        ready.cancel()
        await asyncio.gather(ready, return_exceptions=True)
        await reset()


async def _announce_when_ready(base: str, web_lines: str) -> None:
    """Ask the app's own health, as a platform's probe would (the first answer starts warming
    the offline models), and say "ready" only once it answers ok: a capture sent then is
    classified at full speed."""
    said: set[str] = set()
    async with httpx.AsyncClient(timeout=30) as client:
        while True:
            try:
                body = (await client.get(f"{base}/health")).json()
            except (httpx.HTTPError, ValueError):
                body = {"status": "starting"}  # not listening yet
            status = str(body.get("status"))
            if status == "ok":
                break
            if status not in said:
                said.add(status)
                _say_not_ready(status, body)
            await asyncio.sleep(0.5)
    elapsed = time.monotonic() - _STARTED
    print(
        f"\nReady in {elapsed:.0f} s: the capture pipeline at {base}  (Ctrl-C stops everything)\n"
        f"{web_lines}"
        f"  dev user: dev   API key: local-dev-key\n"
        f"  curl {base}/health\n"
        f"  curl -N -H 'X-API-Key: local-dev-key' -H 'Content-Type: application/json' \\\n"
        f'    -d \'{{"threadId":"t1","runId":"r1","messages":[{{"id":"m1","role":"user",'
        f'"content":"Call Sarah about the budget review"}}]}}\' {base}/capture\n',
        flush=True,
    )


def _say_not_ready(status: str, body: dict) -> None:
    if status == "warming":
        names = " and ".join(body.get("models") or {})
        print(
            f"Warming the offline models ({names}): seconds, longer on a busy machine or "
            "after the classifier's examples changed (it encodes them again); /api/health "
            'answers 503 "warming" until then.',
            flush=True,
        )
    elif status == "unhealthy":
        checks = {**body.get("checks", {}), **(body.get("models") or {})}
        down = ", ".join(name for name, c in checks.items() if c.get("status") == "down")
        logging.getLogger("devhost").warning("not ready: down: %s (see /api/health)", down)


if __name__ == "__main__":
    sys.exit(main())
