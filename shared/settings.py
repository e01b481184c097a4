"""The app's one settings object, read from app settings (environment variables)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

INBOX = "Inbox"
BUCKET_CONTAINERS = ("People", "Projects", "Ideas", "Admin")
CLASSIFY_QUEUE = "captures-classify"
OUTCOMES_QUEUE = "captures-outcomes"
VOICE_CONTAINER = "voice-notes"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", populate_by_name=True)

    # Cosmos DB: endpoint with a key locally; endpoint alone means managed identity.
    cosmos_endpoint: str = Field(validation_alias=AliasChoices("COSMOS_ENDPOINT"))
    cosmos_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("COSMOS_KEY"))
    cosmos_database: str = Field(
        default="secondbrain", validation_alias=AliasChoices("COSMOS_DATABASE")
    )

    # Storage: the same connection the Functions host uses for triggers. A connection
    # string locally; the identity-based __blobServiceUri/__queueServiceUri pair in Azure.
    storage_connection_string: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage")
    )
    storage_blob_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage__blobServiceUri")
    )
    storage_queue_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("AzureWebJobsStorage__queueServiceUri")
    )

    health_timeout_s: float = Field(default=3.0, validation_alias=AliasChoices("HEALTH_TIMEOUT_S"))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()  # type: ignore[call-arg]  # values come from the environment
