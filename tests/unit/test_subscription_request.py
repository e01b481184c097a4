"""The body of POST /api/push/subscriptions (shared/http/requests.py): the browser's
`PushSubscription.toJSON()` and nothing more, parsed into what the subscribe use case takes."""

from __future__ import annotations

import json

import pytest

from shared.domain.push import PushKeys
from shared.http.problems import Problem
from shared.http.requests import SubscriptionRequest, parse_subscription_request

# The shape of a key only: whether it is a point on the curve is the use case's to check.
KEYS = {"p256dh": "B" + "A" * 86, "auth": "A" * 22}
BODY = {"endpoint": "https://fcm.googleapis.com/x", "expirationTime": None, "keys": KEYS}


def test_the_request_is_the_browsers_to_json_and_nothing_more() -> None:
    assert SubscriptionRequest.model_validate(BODY).expiration_time is None
    for wrong in (
        {**BODY, "userId": "someone-else"},
        {**BODY, "keys": {**KEYS, "p256dh": KEYS["p256dh"][:-2]}},
        {**BODY, "keys": {**KEYS, "auth": "short"}},
        {**BODY, "keys": {**KEYS, "extra": "x"}},
        {**BODY, "endpoint": "https://fcm.googleapis.com/" + "x" * 3000},
        {**BODY, "expirationTime": -1},
    ):
        with pytest.raises(ValueError):
            SubscriptionRequest.model_validate(wrong)


def test_the_body_becomes_the_new_subscription_with_its_keys_as_stored() -> None:
    body = {**BODY, "expirationTime": 1.5e12}
    new = parse_subscription_request(json.dumps(body).encode(), "application/json")
    assert new.endpoint == BODY["endpoint"] and new.expiration_time == 1.5e12
    assert new.keys == PushKeys.model_validate(KEYS)


def test_a_body_that_is_not_a_subscription_is_a_422() -> None:
    with pytest.raises(Problem) as refused:
        parse_subscription_request(json.dumps({"endpoint": ""}).encode(), "application/json")
    assert refused.value.status == 422
