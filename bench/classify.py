"""`python -m bench classify --model offline|openai`: the labelled set through the app's own
classifier (as the settings configure it) and the app's outcome rule, then the figures: the
bars, precision and recall, confusion, calibration, filed details, tokens, cost and latency.
With `--folds K`, the offline model's examples are cross-validated as well."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from bench import crossval
from bench.figures import BARS, Judged, Prices, figures, holds
from bench.labelled import EVAL_SET, LabelledCapture, load
from bench.measure import machine
from shared.domain.errors import ClassifierUnavailable
from shared.domain.outcomes import decide
from shared.domain.ports import Classifier

if TYPE_CHECKING:
    from openai.types import CompletionUsage

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# gpt-4o-mini's list price (OpenAI, and Azure OpenAI global standard), per million tokens, as
# published on 2024-07-18 and unchanged since: pass --price-in/--price-out for another model.
PRICE_IN_PER_M = 0.15
PRICE_OUT_PER_M = 0.60


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench classify", description=__doc__)
    parser.add_argument("--model", choices=("offline", "openai"), required=True)
    parser.add_argument(
        "--set",
        type=Path,
        action="append",
        help="labelled captures (JSONL); repeat to pool several sets (default: the frozen set)",
    )
    parser.add_argument(
        "--folds",
        type=int,
        default=0,
        help="also cross-validate the offline model's examples, K folds (0: don't)",
    )
    parser.add_argument(
        "--leave-one-out",
        action="store_true",
        help="offline: classify each --set with examples that hold the other sets but not it",
    )
    parser.add_argument(
        "--encoder",
        choices=("minilm", "e5"),
        help="offline: the classifier's sentence encoder (default: the setting"
        " OFFLINE_CLASSIFIER_ENCODER)",
    )
    parser.add_argument(
        "--price-in", type=float, default=PRICE_IN_PER_M, help="USD per 1M prompt tokens"
    )
    parser.add_argument(
        "--price-out", type=float, default=PRICE_OUT_PER_M, help="USD per 1M completion tokens"
    )
    parser.add_argument("--out", type=Path, help="results file (default: bench/results/...)")
    args = parser.parse_args(argv)

    _app_settings()
    sets = args.set or [EVAL_SET]
    captures = [capture for path in sets for capture in load(path)]
    if args.model == "openai":
        from shared.adapters.openai_client import model_configured
        from shared.settings import get_settings

        if not model_configured(get_settings()):
            print(
                "no model server configured: set AZURE_OPENAI_ENDPOINT (with AZURE_OPENAI_API_KEY,"
                " or a signed-in Azure identity) and AZURE_OPENAI_CHAT_DEPLOYMENT, or"
                " OPENAI_BASE_URL (and OPENAI_API_KEY, OPENAI_CHAT_MODEL)",
                file=sys.stderr,
            )
            return 2
    encoder = args.encoder or _encoder_setting()
    if args.leave_one_out:
        return _leave_one_out(sets, encoder)
    prices = Prices(args.price_in, args.price_out)
    report = run(args.model, captures, prices, encoder)
    report["set"] = ", ".join(_relative(path) for path in sets)
    if args.folds:
        report["examples_cross_validated"] = crossval.cross_validate(args.folds, encoder=encoder)
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    report["command"] = "python -m bench classify " + " ".join(argv)
    report["machine"] = machine()

    out = args.out or RESULTS / f"classify-{args.model}-{'+'.join(p.stem for p in sets)}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(table(report))
    print(f"\nwritten: {out}")
    return 0


def _encoder_setting() -> str:
    from shared.settings import get_settings

    return get_settings().offline_classifier_encoder


def _leave_one_out(sets: list[Path], encoder: str) -> int:
    result = crossval.leave_one_set_out({path.stem: load(path) for path in sets}, encoder=encoder)
    result["encoder"] = encoder
    print(f"offline classifier over {encoder}'s vectors, each set left out in turn")
    for name, f in [*result["sets"].items(), ("pooled", result["pooled"])]:
        right, asked, wrong = f["bucketed_filed_right_asked_wrong"]
        print(
            f"{name:32} {f['captures']:>4} captures: filed right {_v(right)}, asked {_v(asked)},"
            f" filed wrong {_v(wrong)}; clear right bucket {_v(f['bars']['clear_right_bucket'])};"
            f" other languages right or asked {_v(f['other_language_acceptable'])}"
        )
    out = RESULTS / f"classify-leave-one-out-{len(sets)}-sets-{encoder}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


def run(
    model: str,
    captures: list[LabelledCapture],
    prices: Prices | None = None,
    encoder: str | None = None,
) -> dict:
    """Classify every capture, one at a time, with the `model` the settings configure (offline:
    over `encoder`'s vectors, default the setting's)."""
    usage: list[CompletionUsage] = []
    started = time.perf_counter()
    classifier = build(model, on_usage=usage.append, encoder=encoder)
    report: dict = {"model": model}
    if model == "offline":
        report["encoder"] = encoder or _encoder_setting()
        classifier.warm_up()  # type: ignore[attr-defined]  # the offline one has it; the port not
        report["warm_up_s"] = round(time.perf_counter() - started, 2)
    else:
        from shared.settings import get_settings

        report["deployment"] = get_settings().chat_model
    judged, unavailable = asyncio.run(judge(classifier, captures, usage))
    report["unavailable"] = unavailable
    report["figures"] = figures(judged, prices if model == "openai" else None)
    report["captures"] = [
        {
            "id": j.capture.id,
            "label": j.capture.label,
            "bucket": j.classification.bucket,
            "confidence": j.classification.confidence,
            "outcome": j.outcome,
        }
        for j in judged
    ]
    return report


def build(
    model: str,
    on_usage: Callable[[CompletionUsage], None] | None = None,
    encoder: str | None = None,
) -> Classifier:
    """The app's classifier: the offline model (over `encoder`, default the setting's), or the
    configured model server's."""
    from shared import bootstrap

    if model == "offline":
        from shared.adapters.classifier.offline import OfflineClassifier

        return OfflineClassifier(encoder=encoder or _encoder_setting())  # type: ignore[arg-type]
    return bootstrap.root().openai_classifier(on_usage=on_usage)


async def judge(
    classifier: Classifier, captures: list[LabelledCapture], usage: list[CompletionUsage]
) -> tuple[list[Judged], list[str]]:
    """One capture at a time, so each latency is the capture's alone and each usage report
    (appended by the classifier as its call returns) belongs to the capture just sent.
    Also the ids of the captures the model server failed on (after the client's retries):
    the app would keep those queued and try again, so they are no outcome to count."""
    judged, unavailable = [], []
    try:
        for capture in captures:
            reported = len(usage)
            start = time.perf_counter()
            try:
                c = await classifier.classify(capture.text, said_on=capture.today)
            except ClassifierUnavailable:
                unavailable.append(capture.id)
                continue
            elapsed = time.perf_counter() - start
            tokens = usage[-1] if len(usage) > reported else None
            judged.append(
                Judged(
                    capture,
                    c,
                    decide(c),
                    elapsed,
                    prompt_tokens=tokens.prompt_tokens if tokens else None,
                    completion_tokens=tokens.completion_tokens if tokens else None,
                )
            )
    finally:
        await _close_model_client()
    return judged, unavailable


async def _close_model_client() -> None:
    """The model client belongs to this run's event loop: closed with it."""
    from shared import bootstrap

    await bootstrap.reset()


def prompt_tokens(captures: list[LabelledCapture]) -> dict:
    """The OpenAI path's prompt per classification, by the app's own estimate (an upper-ish
    bound: prose at 4 characters or 3/4 word per token, JSON at 3 characters per token)."""
    from shared.adapters.classifier.openai_chat import prompt_tokens_estimate

    counts = sorted(prompt_tokens_estimate(c.text) for c in captures)
    return {"captures": len(counts), "median": counts[len(counts) // 2], "max": counts[-1]}


def _app_settings() -> None:
    """The settings as the app reads them locally: the environment, then local.settings.json.
    The classifier never touches the database, but the settings insist on naming one."""
    from devhost.config import load_local_settings
    from shared.settings import get_settings

    load_local_settings(ROOT)
    os.environ.setdefault("COSMOS_ENDPOINT", "https://127.0.0.1:8081")
    get_settings.cache_clear()


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# --- the table ------------------------------------------------------------------------------


def table(report: dict) -> str:
    f = report["figures"]
    lines = [
        f"{report['model']} model on {report.get('set', '?')}: {f['captures']} captures "
        f"({f['clear']} clear, {f['other_languages']} in other languages), labels {f['labels']}",
    ]
    if failed := report.get("unavailable"):
        lines.append(
            f"NOTE: the model server failed on {len(failed)} captures (after the client's"
            " retries); the figures leave them out: see 'unavailable' in the results file"
        )
    lines += [
        "",
        f"{'measure':62} {'value':>7}  bar",
    ]
    for name, what, bar, kind in BARS:
        value = f["bars"][name]
        limit = "" if bar is None else f"{'>=' if kind == 'min' else '<='} {bar}"
        lines.append(f"{what:62} {_v(value):>7}  {limit} {holds(name, value)}")
    lines.append(
        f"{'ambiguous captures filed in one of their two buckets':62} "
        f"{_v(f['ambiguous_filed_in_a_named_bucket']):>7}"
    )
    lines.append(
        f"{'other-language captures right or asked':62} {_v(f['other_language_acceptable']):>7}"
    )
    right, asked, wrong = f["bucketed_filed_right_asked_wrong"]
    lines.append(
        f"{'bucketed captures: filed right / asked / filed wrong':52} "
        f"{_v(right)} / {_v(asked)} / {_v(wrong)}"
    )
    lines += ["", "per label (clear and unintelligible):  precision  recall   n"]
    for label, v in f["per_label"].items():
        lines.append(f"  {label:36} {_v(v['precision']):>9} {_v(v['recall']):>7} {v['n']:>3}")
    lines += ["", "confusion (rows: label; columns: filed as)"]
    columns = f["confusion"]["columns"]
    lines.append(f"  {'':30}" + "".join(f"{c[:9]:>10}" for c in columns))
    for row, counts in f["confusion"]["rows"].items():
        lines.append(f"  {row:30}" + "".join(f"{n:>10}" for n in counts))
    cal = f["calibration"]
    lines += ["", f"calibration ({cal['captures']} captures given a bucket, one right answer)"]
    lines.append(
        f"  {'confidence':12} {'n':>4} {'mean':>6} {'right':>6} {'gap':>6}  right, 95 % interval"
    )
    for b in cal["bins"]:
        if b["n"]:
            low, high = b["accuracy_95"]
            lines.append(
                f"  {b['bin']:12} {b['n']:>4} {b['mean_confidence']:>6.3f} "
                f"{b['accuracy']:>6.3f} {b['gap']:>6.3f}  {low:.2f}-{high:.2f}"
            )
        else:
            lines.append(f"  {b['bin']:12} {0:>4}")
    lines += [
        f"  expected calibration error {cal['expected_calibration_error']}, "
        f"largest gap in a bin of 10+ {cal['max_gap_bins_of_10_or_more']}",
        f"  bins within 0.05: {cal['bins_within_0.05']} of {cal['bins_filled']}; bins whose"
        f" interval holds their mean confidence: {cal['bins_consistent']} of {cal['bins_filled']}",
    ]
    d = f["details"]
    lines += [
        "",
        f"details: people on {d['people_items']} items: exact {_v(d['people_exact'])}, "
        f"precision {_v(d['people_precision'])}, recall {_v(d['people_recall'])}",
        f"         due dates on {d['due_items']} items: exact (a date or none) "
        f"{_v(d['due_exact'])}; right on {d['items_with_due']} with one "
        f"{_v(d['due_right'])}; invented on {d['items_without_due']} without "
        f"{_v(d['due_invented'])}",
    ]
    u, lat = f["usage"], f["latency_ms"]
    if u["reported"]:
        lines.append(
            f"tokens per capture: prompt {u['prompt_tokens_mean']} (max {u['prompt_tokens_max']}),"
            f" completion {u['completion_tokens_mean']};"
            f" USD per 1,000 captures {u.get('usd_per_1000_captures')}"
        )
    else:
        lines.append("tokens: none reported (no model server)")
    if lat:
        lines.append(f"latency per capture: p50 {lat['p50']} ms, p95 {lat['p95']} ms")
    if "warm_up_s" in report:
        lines.append(f"warm-up (model load, example index, one capture): {report['warm_up_s']} s")
    if cv := report.get("examples_cross_validated"):
        cf = cv["figures"]
        lines += [
            "",
            f"examples, {cv['folds']}-fold cross-validated ({cf['captures']} examples):",
            f"  clear filed CLASSIFIED right {_v(cf['bars']['clear_classified_right'])}, "
            f"right bucket {_v(cf['bars']['clear_right_bucket'])}, "
            f"wrongly MISUNDERSTOOD {_v(cf['bars']['clear_misunderstood'])}, "
            f"unintelligible MISUNDERSTOOD {_v(cf['bars']['unintelligible_misunderstood'])}, "
            f"CLASSIFIED right {_v(cf['bars']['classified_right'])}, "
            f"ECE {cf['calibration']['expected_calibration_error']}",
        ]
    return "\n".join(lines)


def _v(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
