"""The OpenAI SDK's failures, once the client's own retries are spent, told as a port's
"unavailable" error: one mapping for the classifier, the transcriber and the embedder."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import openai

log = logging.getLogger(__name__)


@contextlib.contextmanager
def unavailable_as(error: type[Exception], who: str) -> Iterator[None]:
    """Raise `error` for any SDK failure inside, logged under `who` ("classifier"). Only status,
    code and kind are told: an error's message may quote the input. A caller's own cases (a
    content filter, audio the service refuses) are caught inside, before these."""
    try:
        yield
    except openai.APIStatusError as err:
        # 429/5xx arrive here only after the client's retries are spent. Other 4xx (auth, a
        # missing deployment) are configuration faults: the work stays queued, and we shout.
        transient = err.status_code == 429 or err.status_code >= 500
        level = logging.WARNING if transient else logging.ERROR
        log.log(level, "%s: model call failed with status %d", who, err.status_code)
        raise error(f"{who}: model call failed ({err.status_code})") from err
    except openai.APITimeoutError as err:
        log.warning("%s: model call timed out", who)
        raise error(f"{who}: model call timed out") from err
    except openai.APIConnectionError as err:
        log.warning("%s: could not reach the model", who)
        raise error(f"{who}: could not reach the model") from err
    except openai.OpenAIError as err:
        # e.g. APIResponseValidationError: the service answered something unparseable.
        log.warning("%s: model call failed (%s)", who, type(err).__name__)
        raise error(f"{who}: model call failed ({type(err).__name__})") from err
