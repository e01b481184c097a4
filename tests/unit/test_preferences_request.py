"""The body of PUT /api/preferences (shared/http/requests.py): its fields, defaults and
checks, parsed into what the preferences use case takes."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shared.http.problems import Problem
from shared.http.requests import PreferencesRequest, parse_preferences
from shared.services.digest import NewPreferences


def parsed(body: object) -> NewPreferences:
    return parse_preferences(json.dumps(body).encode(), "application/json")


def test_a_preference_left_out_is_its_default() -> None:
    assert parsed({"timeZone": "Europe/London"}) == NewPreferences(
        time_zone="Europe/London",
        digest_at="07:30",
        digest=True,
        weekly_review_day="sunday",
        reminders=True,
    )


def test_every_preference_given_is_taken() -> None:
    body = {
        "timeZone": "Asia/Kolkata",
        "digestAt": "21:05",
        "digest": False,
        "weeklyReviewDay": "monday",
        "reminders": False,
    }
    assert parsed(body) == NewPreferences(
        time_zone="Asia/Kolkata",
        digest_at="21:05",
        digest=False,
        weekly_review_day="monday",
        reminders=False,
    )


@pytest.mark.parametrize(
    "body",
    [
        {"timeZone": ""},
        {"timeZone": "UTC", "digestAt": "24:00"},
        {"timeZone": "UTC", "digestAt": "7:30"},
        {"timeZone": "UTC", "digestAt": "07:3\u0660"},  # an Arabic-Indic zero
        {"timeZone": "UTC", "weeklyReviewDay": "funday"},
        {"timeZone": "UTC", "digest": "maybe"},
        {"timeZone": "UTC", "colour": "blue"},
    ],
)
def test_preferences_that_are_not_are_refused(body: dict) -> None:
    with pytest.raises(ValidationError):
        PreferencesRequest.model_validate(body)
    with pytest.raises(Problem) as refused:
        parsed(body)
    assert refused.value.status == 422


def test_a_name_that_looks_like_a_zone_passes_the_shape() -> None:
    # Whether the tz database has it is the use case's to say (422 UNKNOWN_TIME_ZONE there).
    assert parsed({"timeZone": "Mars/Olympus"}).time_zone == "Mars/Olympus"


def test_recordings_are_kept_365_days_unless_told_otherwise() -> None:
    kept = parsed({"timeZone": "UTC"})
    assert (kept.keep_audio, kept.audio_retention_days) == (True, 365)
    forever = parsed({"timeZone": "UTC", "audioRetentionDays": None})
    assert forever.audio_retention_days is None
    none = parsed({"timeZone": "UTC", "keepAudio": False, "audioRetentionDays": 30})
    assert (none.keep_audio, none.audio_retention_days) == (False, 30)


@pytest.mark.parametrize("days", [0, -1, 3651, 1.5, "30", True])
def test_a_retention_outside_1_to_3650_days_is_refused(days: object) -> None:
    with pytest.raises(Problem) as refused:
        parsed({"timeZone": "UTC", "audioRetentionDays": days})
    assert refused.value.status == 422
