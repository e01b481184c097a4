"""`python -m bench classify --model openai` against the scripted model server: the request it
sends is the app's classifier's, with the prompt's rules, and the figures of a scripted run of
a small labelled set come out as the answers say they should."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.labelled import REFERENCE_DATE
from shared.adapters.classifier.openai_chat import SYSTEM_PROMPT, ModelAnswer, system_prompt
from testkit.fake_openai import FakeOpenAI, classification, http_error
from testkit.support import bench_classify

MODEL = "bench-deployment"
# (capture, the scripted answer): the answers make every figure a known fraction.
SCRIPT = [
    (
        {"text": "Call Sarah about the budget review", "label": "People", "people": ["Sarah"]},
        classification("People", 0.92, "Call Sarah"),
    ),
    (
        {"text": "Pay the council tax by Friday", "label": "Admin", "due": "2026-11-27"},
        classification("Admin", 0.95, "Pay council tax"),
    ),
    (
        {"text": "Kitchen renovation: get three quotes", "label": "Projects"},
        classification("Ideas", 0.7, "Kitchen quotes"),
    ),
    (
        {"text": "what if socks had pockets", "label": "Ideas"},
        classification("Ideas", 0.45, "Socks with pockets", "An idea or a project?"),
    ),
    ({"text": "asdf qwer zxcv", "label": "unintelligible"}, classification(None, 0.0, "Unclear")),
    (
        {"text": "Lunch with Ana about the app", "label": "ambiguous"}
        | {"also": ["People", "Projects"]},
        classification("People", 0.5, "Lunch with Ana", "About Ana or the app?"),
    ),
    (
        {"text": "Mañana llamar a Lucía", "label": "People", "lang": "es", "people": ["Lucía"]},
        classification("Admin", 0.9, "Llamar a Lucía"),
    ),
]


def test_the_request_is_the_classifiers_with_the_rules(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.reset()
    fake.enqueue(classification("People", 0.9, "Call Sarah"))
    done, _ = bench_classify(fake.base_url, [SCRIPT[0][0]], tmp_path, model=MODEL)
    assert done.returncode == 0, done.stderr

    [request] = fake.requests
    assert request.path == "/v1/chat/completions"
    body = request.json
    assert body["model"] == MODEL
    assert body["messages"] == [
        # The set's own day, which its relative dates are labelled from.
        {"role": "system", "content": system_prompt(REFERENCE_DATE)},
        {"role": "user", "content": "Call Sarah about the budget review"},
    ]
    schema = body["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    assert schema["json_schema"]["schema"] == ModelAnswer.model_json_schema()
    # The rules for what cannot be filed travel with every request, in the prompt and in the
    # schema: a null bucket for the unintelligible, the second bucket of an ambiguous one (which
    # the server turns into a question), the vague kept under 0.6, any language alike.
    prompt = SYSTEM_PROMPT.lower()
    assert "null when nobody could file it" in prompt and "transcription noise" in prompt
    assert "when two buckets fit about equally, the other one" in prompt
    assert "too vague to act on (a bare word or name" in prompt and "below 0.6" in prompt
    answer = schema["json_schema"]["schema"]
    assert {"bucket", "also_fits"} <= set(answer["required"])
    # A bucket or null, as `bucket` is.
    assert answer["properties"]["also_fits"]["anyOf"] == answer["properties"]["bucket"]["anyOf"]
    assert "any language" in prompt


def test_figures_of_a_scripted_run(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.reset()
    fake.enqueue(*(step for _, step in SCRIPT))
    rows = [row for row, _ in SCRIPT]
    done, report = bench_classify(fake.base_url, rows, tmp_path, "--price-in", "1.0", model=MODEL)
    assert done.returncode == 0, done.stderr
    assert "clear captures filed CLASSIFIED in the right bucket" in done.stdout
    assert report is not None

    assert len(fake.requests) == len(SCRIPT)
    assert report["model"] == "openai" and report["deployment"] == MODEL
    f = report["figures"]
    assert f["captures"] == 7 and f["clear"] == 4 and f["other_languages"] == 1
    assert f["bars"] == {
        "clear_classified_right": 0.5,  # Sarah and the tax; the kitchen went to Ideas
        "clear_right_bucket": 0.75,  # + the socks, filed in Ideas but asked
        "clear_asked_right_bucket": 0.25,
        "clear_misunderstood": 0.0,
        "ambiguous_asked": 1.0,
        "unintelligible_misunderstood": 1.0,
        "classified_right": 0.5,  # Sarah and the tax right; the kitchen and Lucía wrong
        "other_language_confident_wrong": 1.0,
    }
    assert f["confusion"]["rows"]["Projects"] == [0, 0, 1, 0, 0]
    assert f["per_label"]["Ideas"] == {"precision": 0.5, "recall": 1.0, "n": 1}
    assert f["details"]["people_exact"] == 1.0 and f["details"]["due_right"] == 1.0
    # The unintelligible one came back without a bucket: no claim to calibrate.
    assert f["calibration"]["captures"] == 5

    # Tokens as the server reported them (prompt and answer at 4 characters a token).
    prompts = [sum(len(m["content"]) for m in r.messages) // 4 + 1 for r in fake.requests]
    answers = [len(step.content or "") // 4 + 1 for _, step in SCRIPT]
    usage = f["usage"]
    assert usage["reported"] == 7
    assert usage["prompt_tokens_mean"] == pytest.approx(sum(prompts) / 7, abs=0.05)
    assert usage["completion_tokens_mean"] == pytest.approx(sum(answers) / 7, abs=0.05)
    expected = (sum(prompts) / 7 * 1.0 + sum(answers) / 7 * 0.60) / 1000
    assert usage["usd_per_1000_captures"] == pytest.approx(expected, abs=1e-4)
    assert f["latency_ms"]["n"] == 7 and 0 < f["latency_ms"]["p50"] <= f["latency_ms"]["p95"]
    assert [c["outcome"] for c in report["captures"]] == [
        "CLASSIFIED",
        "CLASSIFIED",
        "CLASSIFIED",
        "LOW_CONFIDENCE",
        "MISUNDERSTOOD",
        "LOW_CONFIDENCE",
        "CLASSIFIED",
    ]


def test_several_sets_are_pooled_into_one_run(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.reset()
    fake.enqueue(SCRIPT[0][1], SCRIPT[1][1])
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps(SCRIPT[1][0]) + "\n", encoding="utf-8")
    done, report = bench_classify(fake.base_url, [SCRIPT[0][0]], tmp_path, "--set", str(second))
    assert done.returncode == 0, done.stderr
    assert report is not None
    assert report["set"].endswith("second.jsonl") and "set.jsonl, " in report["set"]
    assert report["figures"]["captures"] == 2
    assert [c["label"] for c in report["captures"]] == ["People", "Admin"]


def test_a_capture_the_server_failed_on_is_left_out_and_said(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.reset()
    fake.enqueue(SCRIPT[0][1], http_error(503), SCRIPT[1][1])
    rows = [SCRIPT[0][0], {"id": "down", "text": "Renew the passport", "label": "Admin"}]
    done, report = bench_classify(fake.base_url, [*rows, SCRIPT[1][0]], tmp_path)
    assert done.returncode == 0, done.stderr
    assert report is not None
    # The app would keep that one queued: no outcome to count, and the run goes on.
    assert report["unavailable"] == ["down"]
    assert report["figures"]["captures"] == 2
    assert report["figures"]["bars"]["clear_classified_right"] == 1.0
    assert "failed on 1 captures" in done.stdout


def test_without_a_model_server_it_says_what_to_set(fake: FakeOpenAI, tmp_path: Path) -> None:
    done, report = bench_classify("", [SCRIPT[0][0]], tmp_path)
    assert done.returncode == 2 and report is None
    assert "AZURE_OPENAI_ENDPOINT" in done.stderr and "OPENAI_BASE_URL" in done.stderr
