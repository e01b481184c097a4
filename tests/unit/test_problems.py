"""Errors answered before a stream starts: problem+json, and a 503 that invites a retry."""

import json

from shared.domain import errors
from shared.domain.errors import (
    STORAGE_DOWN,
    Conflict,
    Failed,
    LimitReached,
    Refused,
    StorageUnavailable,
    Unavailable,
    refusal_for,
)
from shared.http.edge import STATUS_OF_REFUSAL, problem_for
from shared.http.problems import Problem
from shared.services.pipeline import NOT_SAVED


def test_storage_down_is_a_503_with_retry_after_and_no_internals() -> None:
    response = problem_for(StorageUnavailable("Cosmos answered 503 at 10.0.0.7")).response()
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.media_type == "application/problem+json"
    body = json.loads(response.body)
    assert body["status"] == 503 and "10.0.0.7" not in response.body.decode()


def test_a_problem_keeps_its_code_extras_and_headers() -> None:
    problem = Problem(409, "No.", code="CONFLICT", headers={"X-Why": "x"}, captureStatus="filed")
    response = problem_for(problem).response()
    assert response.status_code == 409 and response.headers["x-why"] == "x"
    assert json.loads(response.body) == {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "No.",
        "code": "CONFLICT",
        "captureStatus": "filed",
    }


def test_a_services_refusal_is_answered_with_its_message_code_and_details() -> None:
    refusal = Conflict("Not now.", "NOT_AWAITING_CLARIFICATION", captureStatus="filed")
    body = json.loads(problem_for(refusal).response().body)
    assert body == {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "Not now.",
        "code": "NOT_AWAITING_CLARIFICATION",
        "captureStatus": "filed",
    }
    limited = problem_for(LimitReached("Too many.", "TOO_MANY_FEEDS", retry_after_s=10))
    assert limited.status == 429 and limited.response().headers["retry-after"] == "10"


def test_every_kind_of_refusal_has_a_status() -> None:
    kinds = {
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, Refused) and value is not Refused
    }
    assert kinds == set(STATUS_OF_REFUSAL)


def test_a_capture_not_saved_is_told_over_http_as_storage_down_or_internal() -> None:
    """The plain door answers the pipeline's refusals as it always has: storage down is the
    one 503 (no code), an unexpected failure a 500 INTERNAL with the refusal's message."""
    down = problem_for(Unavailable(NOT_SAVED, "STORAGE_UNAVAILABLE"))
    stored_down = problem_for(StorageUnavailable("x"))
    assert (down.status, down.detail, down.code) == (503, STORAGE_DOWN, None)
    assert (down.status, down.detail, down.headers) == (
        stored_down.status,
        stored_down.detail,
        stored_down.headers,
    )
    failed = problem_for(Failed(NOT_SAVED, "INTERNAL"))
    assert (failed.status, failed.detail, failed.code) == (500, NOT_SAVED, "INTERNAL")


def test_anything_unexpected_is_a_500_that_says_nothing_of_it() -> None:
    problem = problem_for(KeyError("secret"))
    assert (problem.status, problem.code) == (500, "INTERNAL")
    assert "secret" not in problem.detail


def test_every_door_reads_the_same_code_and_message() -> None:
    refusal = Conflict("This capture was deleted.", "CAPTURE_DELETED")
    problem = problem_for(refusal)
    told = refusal_for(refusal)
    assert (problem.status, problem.code, problem.detail) == (409, told.code, told.message)
    assert (refusal_for(StorageUnavailable("x")).message, refusal_for(ValueError()).code) == (
        STORAGE_DOWN,
        "INTERNAL",
    )
