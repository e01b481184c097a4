"""What text the pipeline accepts and keeps: valid Unicode, decided once.

JSON may carry lone UTF-16 surrogates (`"\\udfff"`; JavaScript's string slicing makes them), which
Python decodes into strings that cannot be encoded as UTF-8: stored, they break every later
read, tokenizer and response. Every string that comes in (request bodies, stored documents,
model answers) is therefore made valid the way a browser's UTF-8 encoder does it: each lone
surrogate becomes U+FFFD, and a split pair is joined again.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator


def valid_text(value: str) -> str:
    """`value` with every lone surrogate replaced by U+FFFD (unchanged when it has none)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass keeps the code units as they are; decoding them joins
        # pairs and replaces what is left alone.
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return value


def shortened(text: str, limit: int) -> str:
    """`text` within `limit` characters for a display-only field (a notification): cut at a
    word, with an ellipsis that shows it was cut. Never for what is stored."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut.strip() else cut).rstrip() + "…"


def valid_tree(value: Any) -> Any:
    """A parsed JSON value with `valid_text` applied to every string in it, keys included."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_tree(k): valid_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_tree(v) for v in value]
    return value


class ValidTextModel(BaseModel):
    """A model whose strings are valid Unicode whatever it is built from (JSON, a stored
    document, a model's answer)."""

    @model_validator(mode="before")
    @classmethod
    def _valid_strings(cls, data: Any) -> Any:
        return valid_tree(data) if isinstance(data, dict) else data
