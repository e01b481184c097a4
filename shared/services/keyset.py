"""Where the next page of a newest-first list starts (the inbox, a person's items): at the
createdAt of the last item sent, after the ids already sent at that very instant, as an
opaque token. Never an OFFSET: items arriving meanwhile neither shift nor repeat."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field, ValidationError

from shared.domain.documents import utc_text
from shared.domain.errors import Malformed

# Ids kept for one instant: a tie longer than this is, in practice, never met.
MAX_IDS = 100


class Listed(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


class Cursor(BaseModel):
    t: str = Field(max_length=40, description="The last item's createdAt, as stored.")
    ids: list[str] = Field(max_length=MAX_IDS, description="The ids already sent at `t`.")

    def sent(self, item: Listed) -> bool:
        """Was `item` on an earlier page (an item made at the cursor's very instant)?"""
        return item.id in self.ids and utc_text(item.created_at) == self.t


def cursor_after(items: Sequence[Listed], previous: Cursor | None) -> Cursor:
    """The cursor after a page of `items`, newest first, that followed `previous`."""
    last = utc_text(items[-1].created_at)
    ids = [i.id for i in items if utc_text(i.created_at) == last]
    if previous is not None and previous.t == last:
        ids = [*previous.ids, *ids]  # a tie longer than a page
    return Cursor(t=last, ids=ids[-MAX_IDS:])


def encode(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(cursor.model_dump_json().encode()).decode().rstrip("=")


def decode(token: str) -> Cursor:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        return Cursor.model_validate(json.loads(raw))
    # RecursionError: a token that decodes to deeply nested JSON.
    except (binascii.Error, ValueError, ValidationError, UnicodeDecodeError, RecursionError) as exc:
        raise Malformed("The continuation token is not valid.", "BAD_TOKEN") from exc
