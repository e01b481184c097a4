"""Errors answered before a stream starts: problem+json, and a 503 that invites a retry."""

import json

from shared.adapters.storage_errors import StorageUnavailable
from shared.http.problems import Problem, error_response


def test_storage_down_is_a_503_with_retry_after_and_no_internals() -> None:
    response = error_response(StorageUnavailable("Cosmos answered 503 at 10.0.0.7"))
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.media_type == "application/problem+json"
    body = json.loads(response.body)
    assert body["status"] == 503 and "10.0.0.7" not in response.body.decode()


def test_a_problem_keeps_its_code_extras_and_headers() -> None:
    problem = Problem(409, "No.", code="CONFLICT", headers={"X-Why": "x"}, captureStatus="filed")
    response = error_response(problem)
    assert response.status_code == 409 and response.headers["x-why"] == "x"
    assert json.loads(response.body) == {
        "type": "about:blank",
        "title": "Conflict",
        "status": 409,
        "detail": "No.",
        "code": "CONFLICT",
        "captureStatus": "filed",
    }
