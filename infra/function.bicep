// The Function App on Flex Consumption (Linux, Python 3.11) and every app setting it reads in
// Azure. Connections are identity-based: endpoints and the identity's client id, no keys.

param name string
param location string
param tags object

param identityId string
param identityClientId string

param storageBlobEndpoint string
param storageQueueEndpoint string
@description('Blob container Flex Consumption deploys the package from.')
param deploymentContainer string

param cosmosEndpoint string
param cosmosDatabase string
param openAiEndpoint string
param openAiApiVersion string
param chatDeployment string
param transcribeDeployment string
param embeddingDeployment string
param embeddingDimensions int
param appInsightsConnectionString string

@description('API_KEYS: comma-separated "user:sha256(key)" entries (`python -m shared.api_keys mint`).')
param apiKeys string

@description('The web app\'s origin (https://host): the one origin browsers may call the API from.')
param corsOrigin string
@description('Key Vault secret URIs (no version: the latest) of the VAPID key pair.')
param vapidPrivateKeyUri string
param vapidPublicKeyUri string
param vapidSubject string

param maximumInstanceCount int
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int
@minValue(0)
param alwaysReadyHttpInstances int

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  // checkov:skip=CKV_AZURE_225: a personal service that scales to zero; zones are a cost choice
  name: 'plan-${name}'
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    tier: 'FlexConsumption'
    name: 'FC1'
  }
  properties: {
    reserved: true
  }
}

resource app 'Microsoft.Web/sites@2024-04-01' = {
  // checkov:skip=CKV_AZURE_222: the phone app's API is public; every route but health needs a key
  // checkov:skip=CKV_AZURE_17: clients authenticate with API keys or Entra ID, not certificates
  // checkov:skip=CKV_AZURE_212: scale to zero by default; always-ready instances are a parameter
  // checkov:skip=CKV_AZURE_213: health check probes exist on Dedicated and Premium plans only
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Key Vault references in the app settings resolve with this identity (it has no other).
    keyVaultReferenceIdentity: identityId
    siteConfig: {
      minTlsVersion: '1.2'
      http20Enabled: true
      ftpsState: 'Disabled'
      // The platform's CORS, which the host applies (any method and header, nothing exposed;
      // the app exposes Location and Retry-After itself). Credentials off: callers send an
      // API key header, never cookies.
      cors: {
        allowedOrigins: [
          corsOrigin
        ]
        supportCredentials: false
      }
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainer}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        // Streams stay open (a capture for the model's seconds, an events feed up to 120 s):
        // one worker serves many of them at once; main.bicep says why this many.
        triggers: {
          http: {
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
        // Instances kept running for the HTTP functions as one group ('http'); 0, the
        // default, scales to zero (main.bicep says why).
        alwaysReady: [
          {
            name: 'http'
            instanceCount: alwaysReadyHttpInstances
          }
        ]
      }
      runtime: {
        name: 'python'
        version: '3.11'
      }
    }
  }
}

// The whole set: a provision replaces the app settings, so everything lives here.
// Settings left out keep the defaults in shared/settings.py (docs/configuration.md).
resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  // These are app settings; checkov reads every sites/config as the site's web config.
  // checkov:skip=CKV_AZURE_13: see above (authentication: API keys, optional Easy Auth)
  // checkov:skip=CKV_AZURE_63: see above (HTTP logs: App Service only)
  // checkov:skip=CKV_AZURE_65: see above (detailed errors: App Service only)
  // checkov:skip=CKV_AZURE_66: see above (failed request tracing: App Service only)
  // checkov:skip=CKV_AZURE_80: see above (.NET version: a Python app)
  // checkov:skip=CKV_AZURE_88: see above (Azure Files: Flex Consumption deploys from blobs)
  // checkov:skip=CKV_AZURE_222: see above (public network access is the site's)
  parent: app
  name: 'appsettings'
  properties: {
    // The host's storage connection (triggers, keys, leases) and the app's blob and queue
    // clients: the same identity-based connection.
    AzureWebJobsStorage__blobServiceUri: storageBlobEndpoint
    AzureWebJobsStorage__queueServiceUri: storageQueueEndpoint
    AzureWebJobsStorage__credential: 'managedidentity'
    AzureWebJobsStorage__clientId: identityClientId
    // DefaultAzureCredential in the app picks the user-assigned identity by this.
    AZURE_CLIENT_ID: identityClientId
    COSMOS_ENDPOINT: cosmosEndpoint
    COSMOS_DATABASE: cosmosDatabase
    // The Inbox has the full-text index (cosmos.bicep): search ranks with FullTextScore.
    COSMOS_FULL_TEXT: 'true'
    // The Inbox has the vector policy too: search and related items are Cosmos DB's own
    // (ORDER BY RANK RRF(VectorDistance, FullTextScore)).
    SEARCH_ENGINE: 'cosmos'
    AZURE_OPENAI_ENDPOINT: openAiEndpoint
    AZURE_OPENAI_API_VERSION: openAiApiVersion
    AZURE_OPENAI_CHAT_DEPLOYMENT: chatDeployment
    AZURE_OPENAI_TRANSCRIBE_DEPLOYMENT: transcribeDeployment
    AZURE_OPENAI_EMBEDDING_DEPLOYMENT: embeddingDeployment
    EMBEDDING_DIMENSIONS: string(embeddingDimensions)
    APPLICATIONINSIGHTS_CONNECTION_STRING: appInsightsConnectionString
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
    API_KEYS: apiKeys
    // Web Push: the private key is a secret, read from Key Vault by the platform with the
    // app's identity; the public key lives beside it, so the pair is set in one place.
    VAPID_PRIVATE_KEY: '@Microsoft.KeyVault(SecretUri=${vapidPrivateKeyUri})'
    VAPID_PUBLIC_KEY: '@Microsoft.KeyVault(SecretUri=${vapidPublicKeyUri})'
    VAPID_SUBJECT: vapidSubject
    // HTTP streams (the FastAPI extension) need the worker to index at init.
    PYTHON_ENABLE_INIT_INDEXING: '1'
  }
}

output name string = app.name
output defaultHostName string = app.properties.defaultHostName
