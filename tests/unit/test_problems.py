"""Errors answered before a stream starts: problem+json, and a 503 that invites a retry."""

import json

from shared.domain import errors
from shared.domain.errors import Conflict, LimitReached, Refused, StorageUnavailable
from shared.http.edge import STATUS_OF_REFUSAL, problem_for
from shared.http.problems import Problem


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
