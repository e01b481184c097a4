"""The app's one settings object, read from app settings (environment variables)."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.domain.policy import Policy
from shared.domain.push_services import DEFAULT_PUSH_SERVICE_ORIGINS, PushServices

INBOX = "Inbox"
BUCKET_CONTAINERS = ("People", "Projects", "Ideas", "Admin")
CLASSIFY_QUEUE = "captures-classify"
OUTCOMES_QUEUE = "captures-outcomes"
VOICE_CONTAINER = "voice-notes"
# Where a transcribed voice note's recording is kept, apart from the uploads: the upload
# container holds only notes in flight, so the local Event Grid's listing of it stays short.
RECORDINGS_CONTAINER = "voice-recordings"
PUSH_SUBSCRIPTIONS = "PushSubscriptions"
PREFERENCES = "Preferences"
DIGESTS = "Digests"
ASK_THREADS = "AskThreads"
DIGEST_QUEUE = "digests"
# Transcribe a kept recording again (POST /api/captures/{id}/transcribe).
TRANSCRIBE_QUEUE = "captures-transcribe"
# Embed the captures stored before they had a vector (started by the host's admin endpoint).
BACKFILL_QUEUE = "embeddings-backfill"
# The digest timer's NCRONTAB schedule (in UTC): every quarter hour, so a digest comes within
# 15 minutes of its local time (zones are offset by whole quarter hours: Kathmandu's +05:45).
DIGEST_SCHEDULE = "0 */15 * * * *"
# The retention timer (in UTC): once a day, at a quiet hour, lets go of the recordings past
# their owners' retention and tags the others with it (shared/services/audio.py).
AUDIO_RETENTION_SCHEDULE = "0 17 3 * * *"
# STORAGE_TIMEOUT_S's default, which an adapter built without the settings (a test) also takes.
STORAGE_TIMEOUT_S = 8.0


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", populate_by_name=True)

    # Cosmos DB: endpoint with a key locally; endpoint alone means managed identity.
    cosmos_endpoint: str = Field(validation_alias=AliasChoices("COSMOS_ENDPOINT"))
    cosmos_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("COSMOS_KEY"))
    cosmos_database: str = Field(
        default="secondbrain", validation_alias=AliasChoices("COSMOS_DATABASE")
    )
    # The Inbox container has Cosmos DB's full-text index (infra/cosmos.bicep): search ranks
    # with FullTextScore. Off locally: the local server has no full-text functions.
    cosmos_full_text: bool = Field(default=False, validation_alias=AliasChoices("COSMOS_FULL_TEXT"))
    # Which engine ranks search and related items: "cosmos" (one query, ORDER BY RANK
    # RRF(VectorDistance, FullTextScore): the Inbox's vector and full-text policies, set by
    # infra/) or "local" (the stand-in: numpy over the user's vectors, the CONTAINS text
    # match, fused by domain/retrieval.rrf), which the local Cosmos server can run. Default
    # "local"; infra/ sets "cosmos".
    search_engine: Literal["local", "cosmos"] = Field(
        default="local", validation_alias=AliasChoices("SEARCH_ENGINE")
    )

    # Storage: the same connection the Functions host uses for triggers. A connection
    # string locally; identity-based in Azure, as the host reads it: the
    # __blobServiceUri/__queueServiceUri pair, or __accountName for both (public cloud).
    storage_connection_string: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage")
    )
    storage_blob_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage__blobServiceUri")
    )
    storage_queue_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage__queueServiceUri")
    )
    storage_account_name: str | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage__accountName")
    )

    # The managed identity the app's keyless clients use (Storage, Cosmos DB, Azure OpenAI).
    # Needed for a user-assigned identity; unset means the system-assigned one, or the
    # developer's own login locally. (Application Insights names its own: see telemetry.py.)
    azure_client_id: str | None = Field(
        default=None, validation_alias=AliasChoices("AZURE_CLIENT_ID")
    )

    # "userId:sha256(key)" pairs, comma-separated; the keys themselves are never stored.
    api_keys: str = Field(default="", validation_alias=AliasChoices("API_KEYS"))
    # Set by App Service itself when its authentication (Easy Auth) is on: only then is the
    # X-MS-CLIENT-PRINCIPAL-ID header the platform's word rather than the client's.
    easy_auth_enabled: bool = Field(
        default=False, validation_alias=AliasChoices("WEBSITE_AUTH_ENABLED")
    )
    # Each user's budget on this instance: a sustained rate and a burst (0 turns it off).
    rate_limit_per_minute: float = Field(
        default=300, ge=0, validation_alias=AliasChoices("RATE_LIMIT_PER_MINUTE")
    )
    rate_limit_burst: int = Field(
        default=60, ge=1, validation_alias=AliasChoices("RATE_LIMIT_BURST")
    )

    # The classifier: Azure OpenAI when its endpoint is set, else any OpenAI-compatible
    # server at OPENAI_BASE_URL, else the offline model.
    azure_openai_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("AZURE_OPENAI_ENDPOINT")
    )
    azure_openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("AZURE_OPENAI_API_KEY")
    )
    azure_openai_api_version: str = Field(
        default="2024-10-21", validation_alias=AliasChoices("AZURE_OPENAI_API_VERSION")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )
    chat_model: str = Field(
        default="gpt-4o-mini",
        validation_alias=AliasChoices("AZURE_OPENAI_CHAT_DEPLOYMENT", "OPENAI_CHAT_MODEL"),
    )
    # The transcription deployment (Azure) or model (OpenAI-compatible server).
    transcribe_model: str = Field(
        default="whisper",
        validation_alias=AliasChoices(
            "AZURE_OPENAI_TRANSCRIBE_DEPLOYMENT", "OPENAI_TRANSCRIBE_MODEL"
        ),
    )
    # Embeddings (search by meaning, related items): the deployment (Azure) or model, and the
    # dimension its vectors are asked for and stored at (infra/ declares the Inbox's vector
    # policy at the same number: a change means new containers, docs/deploy.md). 512, not the
    # model's 1536: a third of the floats parsed, written and read back on every capture's
    # save (issue 42, bench peer), for a small loss (OpenAI: MTEB 61.6 at 512, 62.3 at 1536).
    embedding_model: str = Field(
        default="text-embedding-3-small",
        validation_alias=AliasChoices(
            "AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "OPENAI_EMBEDDING_MODEL"
        ),
    )
    embedding_dimensions: int = Field(
        default=512, ge=1, le=4096, validation_alias=AliasChoices("EMBEDDING_DIMENSIONS")
    )
    # The cosine similarity a hit by meaning alone (or a related item) must reach with the
    # deployment's model (the offline MiniLM has its own, measured: embedder/minilm.py).
    embedding_min_similarity: float = Field(
        default=0.3, ge=-1, le=1, validation_alias=AliasChoices("EMBEDDING_MIN_SIMILARITY")
    )
    # The offline classifier's sentence encoder (no model server configured): all-MiniLM-L6-v2
    # ("minilm", the one search's offline embedder uses) or multilingual-e5-small ("e5").
    offline_classifier_encoder: Literal["minilm", "e5"] = Field(
        default="e5", validation_alias=AliasChoices("OFFLINE_CLASSIFIER_ENCODER")
    )
    model_timeout_s: float = Field(default=10.0, validation_alias=AliasChoices("MODEL_TIMEOUT_S"))
    model_max_retries: int = Field(default=2, validation_alias=AliasChoices("MODEL_MAX_RETRIES"))
    # A cap on the classifier's answer (sent as max_completion_tokens). Unset by default:
    # reasoning deployments count their hidden reasoning against it. Set it for a classic chat
    # model or a local server (about 200: the answer is some 60 tokens), so a model that rambles
    # inside a string is cut, not waited for.
    model_max_completion_tokens: int | None = Field(
        default=None, ge=1, validation_alias=AliasChoices("MODEL_MAX_COMPLETION_TOKENS")
    )

    # A capture is kept whole, however long a paste or a dictation: 100,000 characters (about
    # 15,000 words) is 1.2 MB stored even if every one is escaped, within a Cosmos DB item's 2 MB.
    max_capture_chars: int = Field(
        default=100_000, ge=1, le=100_000, validation_alias=AliasChoices("MAX_CAPTURE_CHARS")
    )
    # The conversation a client sends with each run; only the last user message is used.
    max_messages: int = Field(default=50, ge=1, validation_alias=AliasChoices("MAX_MESSAGES"))
    max_body_bytes: int = Field(default=256 * 1024, validation_alias=AliasChoices("MAX_BODY_BYTES"))
    keepalive_s: float = Field(default=15.0, validation_alias=AliasChoices("SSE_KEEPALIVE_S"))

    # Voice notes: upload limit, how long an upload URL lives, whether audio is kept once its
    # transcript is stored (off: the transcript is the record, the audio is personal data).
    max_voice_bytes: int = Field(
        default=25 * 1024 * 1024, validation_alias=AliasChoices("MAX_VOICE_BYTES")
    )
    # Longer recordings are refused before transcription (AUDIO_TOO_LONG): a capture is a
    # thought, not a meeting, and transcription time and cost grow with length.
    max_voice_seconds: float = Field(
        default=600, gt=0, validation_alias=AliasChoices("MAX_VOICE_SECONDS")
    )
    upload_url_ttl_s: int = Field(
        default=300, ge=1, le=86_400, validation_alias=AliasChoices("UPLOAD_URL_TTL_S")
    )
    # A voice note whose audio has not arrived this long after its upload URL expired (an
    # upload begun just before expiry may still be in flight) is removed.
    upload_grace_s: float = Field(
        default=600, ge=0, validation_alias=AliasChoices("UPLOAD_GRACE_S")
    )

    # A capture's events feed polls the inbox item (it works across instances) and gives up
    # with RUN_ERROR TIMEOUT after a while; the client reconnects to resume.
    events_poll_s: float = Field(default=0.2, validation_alias=AliasChoices("EVENTS_POLL_S"))
    events_timeout_s: float = Field(
        default=120.0, validation_alias=AliasChoices("EVENTS_TIMEOUT_S")
    )

    # Every capture sends the worker a delayed job as it is stored: if the process handling it
    # dies before it is settled, the worker files it when the job comes due. Longer than a run
    # can take (the model's timeout times its attempts), so it normally finds it settled.
    recovery_delay_s: float = Field(
        default=120, ge=0, le=86_400, validation_alias=AliasChoices("RECOVERY_DELAY_S")
    )
    # Every call to Cosmos DB or Storage gives up after this long (503, or the queue retries):
    # a hung store must not hang requests.
    storage_timeout_s: float = Field(
        default=STORAGE_TIMEOUT_S, gt=0, validation_alias=AliasChoices("STORAGE_TIMEOUT_S")
    )
    # Events feeds one user may hold open on one instance: each polls the store until its
    # capture settles, so their number is bounded.
    max_feeds_per_user: int = Field(
        default=20, ge=1, validation_alias=AliasChoices("MAX_FEEDS_PER_USER")
    )

    health_timeout_s: float = Field(default=3.0, validation_alias=AliasChoices("HEALTH_TIMEOUT_S"))

    # Web Push. The VAPID key pair signs every push (RFC 8292): the public key is what browsers
    # subscribe with, the private key a secret (a Key Vault reference in Azure, generated into
    # local.settings.json locally). Without a usable pair, push is off (the key route answers
    # 503, outcome messages are dropped).
    vapid_public_key: str | None = Field(
        default=None, validation_alias=AliasChoices("VAPID_PUBLIC_KEY")
    )
    vapid_private_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("VAPID_PRIVATE_KEY")
    )
    # Whom a push service contacts about our pushes: a mailto: (or https:) URL.
    vapid_subject: str | None = Field(default=None, validation_alias=AliasChoices("VAPID_SUBJECT"))
    # The push services subscriptions may name (shared/domain/push_services.py): the real
    # ones; tests and local stand-ins list their loopback origin instead.
    push_service_origins: str = Field(
        default=",".join(DEFAULT_PUSH_SERVICE_ORIGINS),
        validation_alias=AliasChoices("PUSH_SERVICE_ORIGINS"),
    )
    # How long an outcome message stays invisible on captures-outcomes: a client following the
    # capture is sent the outcome first, and its mark (outcome_shown_at) lands meanwhile.
    push_delay_s: float = Field(
        default=5, ge=0, le=3600, validation_alias=AliasChoices("PUSH_DELAY_S")
    )

    # Tracing (shared/telemetry.py), the first that is set wins: Application Insights through
    # azure-monitor-opentelemetry; an OTLP/HTTP collector (the exporter reads the standard
    # OTEL_EXPORTER_OTLP_* variables itself); OTEL_TRACES_EXPORTER=console; else off.
    applicationinsights_connection_string: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("APPLICATIONINSIGHTS_CONNECTION_STRING")
    )
    otel_exporter_otlp_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    otel_traces_exporter: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_TRACES_EXPORTER")
    )
    # Unset: every trace is kept (see shared/telemetry.py); set, the exporter's own reading wins.
    otel_traces_sampler: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_TRACES_SAMPLER")
    )
    otel_service_name: str = Field(
        default="capture-pipeline", validation_alias=AliasChoices("OTEL_SERVICE_NAME")
    )
    # Capture text and transcripts are personal data: logged only when debugging asks for it.
    log_capture_text: bool = Field(default=False, validation_alias=AliasChoices("LOG_CAPTURE_TEXT"))

    @field_validator("push_service_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        PushServices.parse(value)  # a list that is not one fails the app at start, clearly
        return value

    @property
    def max_text_body_bytes(self) -> int:
        """What a route that carries a capture's text reads (/capture, /captures, a follow-up):
        MAX_BODY_BYTES, and room for the text as UTF-8 twice (a resume repeats the capture)."""
        return self.max_body_bytes + 8 * self.max_capture_chars

    def policy(self) -> Policy:
        """What the use cases follow, handed to them with the adapters (shared/bootstrap.py)."""
        return Policy(
            recovery_delay_s=self.recovery_delay_s,
            push_delay_s=self.push_delay_s,
            upload_url_ttl_s=self.upload_url_ttl_s,
            upload_grace_s=self.upload_grace_s,
            max_feeds_per_user=self.max_feeds_per_user,
            events_timeout_s=self.events_timeout_s,
            events_poll_s=self.events_poll_s,
        )

    @property
    def push_services(self) -> PushServices:
        return PushServices.parse(self.push_service_origins)

    @property
    def blob_service_uri(self) -> str | None:
        return self.storage_blob_uri or self._account_uri("blob")

    @property
    def queue_service_uri(self) -> str | None:
        return self.storage_queue_uri or self._account_uri("queue")

    def _account_uri(self, service: str) -> str | None:
        # As the host derives it from __accountName: the public cloud's endpoints.
        name = self.storage_account_name
        return f"https://{name}.{service}.core.windows.net" if name else None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()  # values come from the environment
