"""What became of a capture: the outcomes, the server-side thresholds that decide them (the
model only guesses), the questions put to the user, and the failure codes."""

from __future__ import annotations

from enum import StrEnum

from shared.domain.classification import Classification


class Outcome(StrEnum):
    CLASSIFIED = "CLASSIFIED"
    LOW_CONFIDENCE = "LOW_CONFIDENCE"
    MISUNDERSTOOD = "MISUNDERSTOOD"
    UNRESOLVED = "UNRESOLVED"


CLASSIFIED_AT = 0.6
MISUNDERSTOOD_BELOW = 0.3

# Follow-up answers to MISUNDERSTOOD before a capture is left UNRESOLVED in the inbox.
FOLLOW_UP_ROUNDS = 2
FILED_OUTCOMES = frozenset({Outcome.CLASSIFIED, Outcome.LOW_CONFIDENCE})

DEFAULT_QUESTION = "I couldn't tell what that was about. What did you want to capture?"
SAY_AGAIN_QUESTION = "I couldn't hear anything in that voice note. Could you say it again?"


def decide(c: Classification, rounds: int = 0) -> Outcome:
    """`rounds`: follow-up answers already given for this capture."""
    if c.bucket is None or c.confidence < MISUNDERSTOOD_BELOW:
        return Outcome.UNRESOLVED if rounds >= FOLLOW_UP_ROUNDS else Outcome.MISUNDERSTOOD
    if c.confidence < CLASSIFIED_AT:
        return Outcome.LOW_CONFIDENCE
    return Outcome.CLASSIFIED


# A question is shown to the user as it is: whatever a model says, it stays a question.
MAX_QUESTION_CHARS = 300


def question_for(outcome: Outcome, c: Classification) -> str | None:
    if outcome is Outcome.MISUNDERSTOOD:
        return _shown(c.question) or DEFAULT_QUESTION
    if outcome is Outcome.LOW_CONFIDENCE:
        return _shown(c.question) or review_question(c.bucket)
    return None


# How sure, in the words a person reads (the numbers stay in the JSON fields): the bands start
# at the thresholds above, so the words agree with what was done.
_SURENESS = ((0.85, "sure"), (CLASSIFIED_AT, "fairly sure"), (MISUNDERSTOOD_BELOW, "not sure"))


def confidence_words(confidence: float) -> str:
    """A confidence as a person reads it: "sure", "fairly sure", "not sure" or "just a guess"."""
    return next((words for floor, words in _SURENESS if confidence >= floor), "just a guess")


def review_question(bucket: object) -> str:
    """What LOW_CONFIDENCE asks when the model asked nothing itself."""
    return f"I filed this under {bucket} — is that right?"


def which_bucket_question(first: object, second: object) -> str:
    """What a classifier asks when two buckets fit. It invites words as well as a bucket: the
    question takes either, and a vague capture is better told than sorted."""
    return f"Where does this belong — {first} or {second}? Or tell me what it is."


def _shown(question: str | None) -> str | None:
    text = " ".join((question or "").split())
    if len(text) <= MAX_QUESTION_CHARS:
        return text or None
    cut = text[: MAX_QUESTION_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


class FailureCode(StrEnum):
    """Why a capture failed; the values are the codes clients see."""

    AUDIO_UNDECODABLE = "AUDIO_UNDECODABLE"
    AUDIO_TOO_LARGE = "AUDIO_TOO_LARGE"
    AUDIO_TOO_LONG = "AUDIO_TOO_LONG"
    TRANSCRIPTION_FAILED = "TRANSCRIPTION_FAILED"  # the blob trigger ran out of retries
    CLASSIFY_FAILED = "CLASSIFY_FAILED"  # the classify worker ran out of retries

    @property
    def message(self) -> str:
        """In words safe to show."""
        return _FAILURE_MESSAGES[self]

    @property
    def is_about_audio(self) -> bool:
        return self is not FailureCode.CLASSIFY_FAILED


_FAILURE_MESSAGES = {
    FailureCode.AUDIO_UNDECODABLE: "We couldn't play that recording. Please record it again.",
    FailureCode.AUDIO_TOO_LARGE: "That recording is too large. Please keep voice notes shorter.",
    FailureCode.AUDIO_TOO_LONG: "That recording is too long. Please keep voice notes shorter.",
    FailureCode.TRANSCRIPTION_FAILED: (
        "We couldn't transcribe that recording. Please record it again."
    ),
    FailureCode.CLASSIFY_FAILED: (
        "We saved this capture but couldn't file it. Pick a bucket for it."
    ),
}


def failure_message(code: FailureCode | None) -> str:
    return code.message if code else "We couldn't process this capture."
