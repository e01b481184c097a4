"""An Azurite blob service over HTTPS with basic OAuth, and a token credential it accepts: the
managed-identity code paths (bearer tokens, user delegation keys) against a real server."""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from azure.core.credentials import AccessToken
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from devhost.emulators import AZURITE_ACCOUNT, REPO, free_port

# What Azure Storage asks Entra ID for; the SDK requests exactly this scope.
STORAGE_SCOPE = "https://storage.azure.com/.default"


class AzuriteTokenCredential:
    """Stands in for DefaultAzureCredential (async): hands out unsigned JWTs.

    Azurite's basic OAuth (dist/src/blob/authentication/BlobTokenAuthenticator.js) only decodes
    the token: it needs iat, nbf and exp around now, an issuer under https://sts.windows.net/ and
    a storage audience, and never checks the signature. The user delegation key it issues is
    derived from the oid and tid claims (ServiceHandler.getUserDelegationKey), so we set both.
    """

    def __init__(self, object_id: str | None = None, tenant_id: str | None = None) -> None:
        self.object_id = object_id or str(uuid.uuid4())
        self.tenant_id = tenant_id or str(uuid.uuid4())
        self.scopes: list[tuple[str, ...]] = []

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        now = int(time.time())
        expires_on = now + 3600
        claims = {
            "aud": "https://storage.azure.com",
            "iss": f"https://sts.windows.net/{self.tenant_id}/",
            "iat": now,
            "nbf": now - 60,  # a little slack for clocks, as Entra ID gives
            "exp": expires_on,
            "oid": self.object_id,
            "tid": self.tenant_id,
        }
        header = {"alg": "none", "typ": "JWT"}
        token = f"{_b64url(header)}.{_b64url(claims)}."
        return AccessToken(token, expires_on)

    async def close(self) -> None:
        pass

    async def __aenter__(self) -> AzuriteTokenCredential:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AzuriteOAuth(NamedTuple):
    url: str  # the blob service endpoint, account included
    cert: Path  # the CA that signed the server's certificate: what clients must trust
    credential: Callable[[], AzuriteTokenCredential]

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.cert)


@contextlib.contextmanager
def azurite_oauth(timeout: float = 30.0) -> Iterator[AzuriteOAuth]:
    """Start `azurite-blob --oauth basic` with a fresh certificate for 127.0.0.1; stop it after."""
    azurite_blob = REPO / "node_modules" / ".bin" / "azurite-blob"
    if not azurite_blob.exists():
        raise RuntimeError("node_modules missing: run `npm ci` (make does this for you)")
    with tempfile.TemporaryDirectory(prefix="azurite-oauth-") as tmp:
        directory = Path(tmp)
        ca, cert, key = _write_tls_files(directory)
        port = free_port()
        log_path = directory / "azurite.log"
        with open(log_path, "wb") as log:
            # Own process group, so that stopping it leaves no node process behind.
            proc = subprocess.Popen(
                [
                    str(azurite_blob),
                    "--silent",
                    "--skipApiVersionCheck",
                    "--disableTelemetry",
                    # Nothing on disk to clean up (Azurite refuses it together with --location).
                    "--inMemoryPersistence",
                    "--blobHost", "127.0.0.1", "--blobPort", str(port),
                    "--oauth", "basic",
                    "--cert", str(cert), "--key", str(key),
                ],
                stdout=log,
                stderr=log,
                cwd=directory,
                start_new_session=True,
            )  # fmt: skip
        try:
            _wait_until_listening(proc, port, time.monotonic() + timeout, log_path)
            yield AzuriteOAuth(
                url=f"https://127.0.0.1:{port}/{AZURITE_ACCOUNT}",
                cert=ca,
                credential=AzuriteTokenCredential,
            )
        finally:
            _stop(proc)


def _wait_until_listening(
    proc: subprocess.Popen[bytes], port: int, deadline: float, log: Path
) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"azurite-blob exited during start-up:\n{log.read_text()}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"azurite-blob did not open port {port} in time:\n{log.read_text()}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _write_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 it signed: (ca, cert, key) PEMs.

    A CA plus a leaf rather than one self-signed certificate: that is what strict X.509
    verification (Python 3.13's default context) accepts as a trust anchor and a server.
    """
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "azurite-oauth test CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        _certificate(ca_name, ca_name, ca_key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(key_cert_sign=True, crl_sign=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    leaf = (
        _certificate(name, ca_name, key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def _certificate(
    subject: x509.Name, issuer: x509.Name, public_key: Any, now: datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
    )


def _key_usage(**usages: bool) -> x509.KeyUsage:
    names = (
        "digital_signature",
        "content_commitment",
        "key_encipherment",
        "data_encipherment",
        "key_agreement",
        "key_cert_sign",
        "crl_sign",
        "encipher_only",
        "decipher_only",
    )
    return x509.KeyUsage(**{name: usages.get(name, False) for name in names})


def _b64url(value: dict[str, Any]) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
