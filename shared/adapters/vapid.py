"""The VAPID key pair (RFC 8292): loaded from the settings and checked to be one pair, or
generated (local set-up, tests, the one-time step for Azure). Keys are base64url: the public key
the uncompressed P-256 point browsers subscribe with, the private key its 32-byte scalar."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from py_vapid import Vapid02

# What an app setting holds when App Service could not resolve its Key Vault reference.
_UNRESOLVED_REFERENCE = "@Microsoft.KeyVault("


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def generate_keys() -> tuple[str, str]:
    """A new pair: (public key, private key)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    private = ec.generate_private_key(ec.SECP256R1())
    return _public_of(private), _b64url(private.private_numbers().private_value.to_bytes(32))


def _public_of(private) -> str:
    from cryptography.hazmat.primitives import serialization

    point = private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return _b64url(point)


@dataclass(frozen=True)
class VapidKeys:
    public_key: str
    signer: Vapid02  # py_vapid's signer of the JWTs, holding the private key


def load_keys(public_key: str, private_key: str) -> VapidKeys:
    """The pair from its settings; ValueError saying which setting is wrong (never a value)."""
    from py_vapid import Vapid

    for name, value in (("VAPID_PUBLIC_KEY", public_key), ("VAPID_PRIVATE_KEY", private_key)):
        if value.startswith(_UNRESOLVED_REFERENCE):
            raise ValueError(
                f"{name} is an unresolved Key Vault reference: is the secret set, and may the "
                "app's identity read it?"
            )
    try:
        signer = Vapid.from_string(private_key=private_key.strip())
    except Exception:
        # `from None`: the cause may hold parts of the key.
        raise ValueError("VAPID_PRIVATE_KEY is not a P-256 private key in base64url") from None
    if _public_of(signer.private_key) != public_key.strip().rstrip("="):
        raise ValueError("VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY")
    return VapidKeys(public_key=_public_of(signer.private_key), signer=signer)
