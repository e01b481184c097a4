"""`python -m bench` (or `make bench`): every benchmark, several times, against the local stack;
prints a table against the project's bars, writes bench/results/latest.json and rewrites
BENCHMARKS.md from it (bench/report.py; `worker` and `peer` below rewrite it too).
`python -m bench classify --model offline|openai`: classification quality (bench/classify.py).
`python -m bench details --set FILE`: the filing rules alone, people and due dates against a
labelled set's (bench/details.py).
`python -m bench ask [--set FILE] [--part tuning|frozen] [--speed] [--embedder minilm|e5-qp|e5-qq]`:
the ask agent's answers on a question set, and with --speed its latency over one user's 10,000
captures (bench/ask.py).

`python -m bench PART` runs one part on its own and writes bench/results/PART-latest.json:
`bigbody` (what one big request body costs the host's memory and the other requests,
bench/bigbody.py), `concurrency` (open streams on one worker process), `costs` (operations per
capture and per voice note), `feed` (the events feed's Cosmos reads: a voice note, an idle
feed's lifetime), `package` (what a deployment ships, and its import time), `followups` (the
follow-up set through the offline models: the share filed in the right bucket,
bench/followups.py), `recall` (one user with 10,000 captures: bucket, person and search pages,
and the export), `mcp` (a tool call over MCP against the same use case's HTTP route, p50/p95,
bench/mcp.py), `digest` (composing one digest, and `--users` users' digests through the timer
and the worker, bench/digest.py), `worker` (the classify worker draining `--queued` captures,
and the CPU it and the emulators spend on each), `voice` (a 5 s note from upload to outcome,
offline, with the segments its transcript got; `--repeat` runs), `peer` (the devhost beside
Agent Framework's AG-UI endpoint, bench/peer.py; installs .venv-peer), `embedding` (what a text
capture's vector costs on its path with the Azure path's embedder: the call, and the inbox
save by the vector's length, bench/embedding.py)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import (
    app,
    ask,
    bigbody,
    classify,
    coldstart,
    concurrency,
    costs,
    details,
    digest,
    embedding,
    followups,
    labelled,
    mcp,
    peer,
    recall,
    text,
    voice,
    worker,
)
from bench import report as benchmarks
from bench.measure import machine
from bench.stack import Stack, stack
from testkit import fake_openai, webapp

RESULTS = Path(__file__).resolve().parent / "results"
MODEL_DELAY_S = 0.3


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["classify"]:
        return classify.main(argv[1:])
    if argv[:1] == ["details"]:
        return details.main(argv[1:])
    if argv[:1] == ["ask"]:
        return ask.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("part", nargs="?", default="all", choices=("all", *PARTS))
    parser.add_argument("--repeat", type=int, default=3, help="runs of everything (median)")
    parser.add_argument("--captures", type=int, default=200, help="sequential text captures")
    parser.add_argument("--queued", type=int, default=500, help="captures for the worker")
    parser.add_argument("--users", type=int, default=digest.USERS, help="users (digest)")
    parser.add_argument("--items", type=int, default=digest.ITEMS, help="items a user (digest)")
    parser.add_argument("--show", type=Path, help="print the table of a results file and stop")
    parser.add_argument(
        "--set",
        type=Path,
        default=followups.FOLLOWUPS,
        help="follow-up pairs (followups; default: bench/data/followups_captures.jsonl)",
    )
    args = parser.parse_args(argv)
    if args.show:
        print(_shown(json.loads(args.show.read_text())["summary"]))
        return 0

    if args.part != "all":
        return run_part(
            args.part,
            args.repeat,
            argv,
            users=args.users,
            items=args.items,
            queued=args.queued,
            followup_set=args.set,
        )

    webapp.build()  # the app as the sources are now
    runs = []
    with stack() as s:
        for number in range(1, args.repeat + 1):
            print(f"run {number} of {args.repeat} ...", file=sys.stderr, flush=True)
            runs.append(one_run(s, args.captures, args.queued))
    summary = merge(runs)
    summary["app_js"] = app.js_shipped()
    captures = labelled.load(labelled.EVAL_SET)
    summary["classification"] = classify.run("offline", captures)["figures"]
    summary["prompt_tokens"] = classify.prompt_tokens(captures)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "commit": benchmarks.commit(),
        "command": "python -m bench " + " ".join(argv),
        "repeat": args.repeat,
        "summary": summary,
        "runs": runs,
    }
    print(table(summary))
    _write(report, "bench")
    print(f"written: {benchmarks.write()}")
    return 0


def _shown(summary: dict) -> str:
    """A results file as the run printed it: a table for the whole bench and the concurrency
    curve, the JSON figures for the other parts."""
    if "text_300ms" in summary:
        return concurrency.table(summary)
    if "classification" in summary:
        return table(summary)
    return json.dumps(summary, indent=1)


def _write(report: dict, name: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    stamp = report["date"].replace(":", "").replace("+0000", "Z")
    latest = "latest.json" if name == "bench" else f"{name}-latest.json"
    for file in (f"{name}-{stamp}.json", latest):
        (RESULTS / file).write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten: {RESULTS / latest}")


PARTS = (
    "bigbody",
    "concurrency",
    "costs",
    "feed",
    "package",
    "followups",
    "mcp",
    "peer",
    "recall",
    "digest",
    "worker",
    "voice",
    "embedding",
)


def run_part(
    part: str,
    repeat: int,
    argv: list[str] | None,
    users: int = digest.USERS,
    items: int = digest.ITEMS,
    queued: int = 500,
    followup_set: Path = followups.FOLLOWUPS,
) -> int:
    if part == "package":
        runs = [merge([coldstart.package() for _ in range(repeat)])]
    else:
        with stack() as s:
            if part == "digest":
                runs = [digest.run(s, repeat, users, items)]
            elif part == "worker":
                runs = [_worker(s, repeat, queued)]
            elif part == "followups":
                runs = [followups.run(s, followup_set)]
            else:
                runs = [_PART_RUNS[part](s, repeat)]
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_average": os.getloadavg(),
        "commit": benchmarks.commit(),
        "command": "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "repeat": repeat,
        "summary": runs[0],
    }
    if part == "concurrency":
        print(concurrency.table(report["summary"]))
    elif part == "followups":
        print(followups.table(report["summary"]))
    elif part == "digest":
        print(digest.table(report["summary"]))
    elif part == "peer":
        print(peer.table(report["summary"]))
    else:
        print(json.dumps(report["summary"], indent=1))
    _write(report, part)
    if f"{part}-latest.json" in benchmarks.READERS:
        print(f"written: {benchmarks.write()}")
    return 0


def _concurrency(s: Stack, repeat: int) -> dict:
    """Every curve `repeat` times against one fresh devhost each; the median of each figure.
    The first run finds where the text curves stop; the others take the same levels."""
    runs: list[dict] = []
    levels: dict[str, tuple[int, ...]] = {}
    for number in range(1, repeat + 1):
        print(f"run {number} of {repeat} ...", file=sys.stderr, flush=True)
        run: dict = {}
        # HTTP alone, as Flex runs it: its instances serve the HTTP functions, and each queue or
        # blob trigger scales on instances of its own. (Each capture's recovery check, due on
        # captures-classify 120 s later, would otherwise land in a later curve's CPU and reads.)
        only_http = {
            "AzureWebJobs.push_worker.Disabled": "true",
            "AzureWebJobs.classify_worker.Disabled": "true",
            "MAX_FEEDS_PER_USER": "1000",
        }
        with s.devhost(f"concurrency-{number}", scripted=True, **only_http) as host:
            pid = host.pid
            for name, delay_s, rounds in (("text_300ms", 0.3, 4), ("text_2s", 2.0, 2)):
                s.model.reset()
                s.model.set_default(
                    fake_openai.classification("Projects", 0.9, "Bench", delay_s=delay_s)
                )
                run[name] = concurrency.text_curve(
                    host.base_url,
                    pid,
                    rounds,
                    levels.get(name, concurrency.LEVELS),
                    stop_early=name not in levels,
                )
                levels[name] = tuple(int(n) for n in run[name])
            run["idle_feeds"] = concurrency.feed_curve(
                host.base_url, s.settings["COSMOS_ENDPOINT"], pid
            )
        runs.append(run)
        print(json.dumps(run), file=sys.stderr, flush=True)
    return {**merge(runs), "runs": runs, "load_average_after": os.getloadavg()}


def _costs(s: Stack, repeat: int) -> dict:
    """Text captures and voice notes counted `repeat` times, each on a fresh devhost; the
    median of each figure."""
    runs = []
    for number in range(1, repeat + 1):
        print(f"run {number} of {repeat} ...", file=sys.stderr, flush=True)
        runs.append({"text": costs.text_captures(s), "voice": costs.voice_notes(s)})
    return {**merge(runs), "runs": runs}


def _feed(s: Stack, repeat: int) -> dict:
    return {"voice_bar": costs.voice_reads(s), "idle_feed": costs.idle_feed_reads(s)}


def _voice(s: Stack, repeat: int) -> dict:
    """A 5 s voice note from upload to outcome with the offline models (`repeat` runs after a
    warm-up, at least 5), the transcript's segments it got, and the transcription alone."""
    with s.devhost("voice", scripted=False) as host:
        note = voice.upload_to_outcome(host.base_url, runs=max(repeat, 5))
    return {"voice_5s": note, "transcription_5s": voice.transcription_alone(runs=3)}


_PART_RUNS = {
    "bigbody": bigbody.run,
    "concurrency": _concurrency,
    "costs": _costs,
    "feed": _feed,
    "peer": peer.run,
    "recall": recall.run,
    "voice": _voice,
    "mcp": mcp.run,
    "embedding": embedding.run,
}


def one_run(s: Stack, captures: int, queued: int) -> dict:
    result: dict = {"cold_start": coldstart.cold_start(runs=5)}
    with webapp.serving() as origin, s.devhost("offline", scripted=False, cors=origin) as host:
        result["text_offline"] = text.sequential(host.base_url, captures)
        result["voice_5s"] = voice.upload_to_outcome(host.base_url, runs=5)
        result["app"] = app.open_to_outcome(host.base_url, origin, runs=5)
    result["transcription_5s"] = voice.transcription_alone(runs=3)

    # The model every other measurement talks to: a scripted server answering in 300 ms.
    s.model.reset()
    s.model.set_default(fake_openai.classification("Projects", 0.9, "Bench", delay_s=MODEL_DELAY_S))
    with s.devhost("scripted", scripted=True) as host:
        result["text_model_300ms"] = text.sequential(host.base_url, captures)
        calls = len(s.model.requests)
        result["text_model_300ms"]["model_calls_per_capture"] = round(calls / (captures + 10), 3)
        outcome = result["text_model_300ms"]["outcome_ms"]
        result["text_model_300ms"]["server_overhead_ms"] = {
            k: round(outcome[k] - MODEL_DELAY_S * 1000, 2) for k in ("p50", "p95", "p99")
        }
        with s.database() as cosmos:
            result["concurrent_50"] = text.concurrent(host.base_url, cosmos, 50)

    result["worker"] = _drain(s, queued)
    return result


def _drain(s: Stack, queued: int) -> dict:
    """The classify worker alone on `queued` captures, with the 300 ms model."""
    s.model.reset()
    s.model.set_default(fake_openai.classification("Projects", 0.9, "Bench", delay_s=MODEL_DELAY_S))
    # The outcomes are counted on captures-outcomes: the push worker, which reads it, is off.
    no_push = {"AzureWebJobs.push_worker.Disabled": "true"}
    result = worker.drain(
        lambda: s.devhost("worker", scripted=True, **no_push),
        s.settings["AzureWebJobsStorage"],
        queued,
        s.emulator_pids,
    )
    result["model_calls_per_capture"] = round(len(s.model.requests) / queued, 3)
    return result


def _worker(s: Stack, repeat: int, queued: int) -> dict:
    runs = []
    for number in range(1, repeat + 1):
        print(f"run {number} of {repeat} ...", file=sys.stderr, flush=True)
        runs.append(_drain(s, queued))
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    return {**merge(runs), "runs": runs}


def merge(runs: list[dict]) -> dict:
    """The median of each number across runs; anything else as the first run had it. A key
    some runs lack (e.g. a queue one run never touched) is merged over the runs that have it."""
    first = runs[0]
    if isinstance(first, dict):
        keys = dict.fromkeys(k for r in runs for k in r)
        return {k: merge([r[k] for r in runs if k in r]) for k in keys}
    if isinstance(first, int | float) and not isinstance(first, bool):
        return round(statistics.median(runs), 3)
    return first


def table(s: dict) -> str:
    t, m, c = s["text_offline"], s["text_model_300ms"], s["concurrent_50"]
    cs, v, w, q = s["cold_start"], s["voice_5s"], s["worker"], s["classification"]
    a = s["app"]
    rows = [
        ("first SSE byte, offline model (p50/p95/p99 ms)", _p(t["first_byte_ms"]), "<= 20 ms"),
        ("first SSE byte, 300 ms model (p50/p95/p99 ms)", _p(m["first_byte_ms"]), "<= 20 ms"),
        ("outcome, offline model (p50/p95/p99 ms)", _p(t["outcome_ms"]), ""),
        ("outcome, 300 ms model (p50/p95/p99 ms)", _p(m["outcome_ms"]), ""),
        ("  server overhead = outcome - 300 ms", _p(m["server_overhead_ms"]), ""),
        ("model calls per capture", m["model_calls_per_capture"], "1"),
        (
            "import function_app / all its SDKs (ms)",
            f"{cs['import_ms']['function_app']} / {cs['import_ms']['framework_and_sdks']}"
            f" = {cs['ratio_all_sdks']}",
            "< 0.5",
        ),
        ("  ... / all its SDKs + azure-monitor", cs["ratio_all_sdks_and_telemetry"], "< 0.5"),
        (
            "  ... / data and model SDKs alone",
            f"{cs['import_ms']['sdks']} ms: {cs['ratio_data_sdks_only']}",
            "",
        ),
        ("  Functions framework alone (ms)", cs["import_ms"]["framework"], ""),
        ("voice 5 s, upload to outcome (median s)", v["median_s"], "< 4 s"),
        (
            "app JavaScript shipped, gzipped (app.js + sw.js)",
            f"{s['app_js']['gzip_bytes'] / 1024:.1f} KiB",
            "< 100 KiB",
        ),
        (
            "app opened -> ready / first outcome, cold (ms)",
            f"{a['cold_ready_ms']} / {a['cold_outcome_ms']}",
            "",
        ),
        ("  ... warm: shell from the service worker", _app(a, "warm_"), ""),
        ("  ... cold, CPU 4x slower (mid-range phone)", _app(a, "cpu_4x_cold_"), ""),
        ("  ... warm, CPU 4x slower", _app(a, "cpu_4x_warm_"), ""),
        ("transcription of 5 s alone (median s)", s["transcription_5s"]["median_s"], ""),
        ("worker, 300 ms model (captures/s steady)", w["per_s_steady"], ">= 40"),
        ("  from host start (captures/s)", w["per_s_from_ready"], ""),
        ("  host peak RSS (MiB)", w["peak_rss_mib"], ""),
        ("50 at once: filed / duplicated", f"{c['filed']} / {c['duplicated']}", "50 / 0"),
        (
            "  outcome spread (p50/p95/max ms)",
            "/".join(str(c["outcome_ms"][k]) for k in ("p50", "p95", "max")),
            "",
        ),
        (
            "offline: clear filed CLASSIFIED right (eval set)",
            q["bars"]["clear_classified_right"],
            ">= 0.93",
        ),
        (
            "  unintelligible MISUNDERSTOOD / clear wrongly",
            f"{q['bars']['unintelligible_misunderstood']} / {q['bars']['clear_misunderstood']}",
            ">= 0.95 / <= 0.02",
        ),
        ("  ambiguous asked", q["bars"]["ambiguous_asked"], ">= 0.9"),
        (
            "prompt tokens per classification (est. median/max)",
            f"{s['prompt_tokens']['median']}/{s['prompt_tokens']['max']}",
            "< 800",
        ),
    ]
    lines = [f"{'measure':52} {'value':>26}  bar"]
    lines += [f"{name:52} {value!s:>26}  {bar}" for name, value, bar in rows]
    lines.append("\nper label (precision / recall):")
    lines += [
        f"  {label:14} {v['precision']} / {v['recall']}" for label, v in q["per_label"].items()
    ]
    return "\n".join(lines)


def _app(a: dict, prefix: str) -> str:
    return f"{a[prefix + 'ready_ms']} / {a[prefix + 'outcome_ms']}"


def _p(d: dict) -> str:
    return f"{d['p50']}/{d['p95']}/{d['p99']}"


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    sys.exit(code)
