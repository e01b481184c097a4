// The capture pipeline in Azure: `azd up` provisions this, deploys the app, then runs
// hooks/postdeploy.sh, which subscribes the voice-note blob trigger to uploads (events.bicep).
targetScope = 'subscription'

@minLength(1)
@maxLength(40)
@description('The azd environment name; it names the resource group and tags everything.')
param environmentName string

@minLength(1)
@description('Region for everything but Azure OpenAI. It must offer Flex Consumption.')
param location string

@description('Region for Azure OpenAI: one that offers both models below (default: location).')
param openAiLocation string = ''

@description('API_KEYS: comma-separated "user:sha256(key)" entries (`python -m shared.api_keys mint`).')
param apiKeys string = ''

@description('VAPID_SUBJECT: whom push services contact about our pushes (mailto:you@example.com).')
param vapidSubject string = ''

param chatModel object = {
  name: 'gpt-4o-mini'
  model: 'gpt-4o-mini'
  version: '2024-07-18'
  sku: 'GlobalStandard'
  capacity: 30 // thousands of tokens per minute
}

param transcribeModel object = {
  name: 'whisper'
  model: 'whisper'
  version: '001'
  sku: 'Standard'
  capacity: 1
}

// Embeddings (search by meaning, related items): 512 dimensions (the model's are 1536, shortened
// by the API's `dimensions`: a third of the floats on every capture's save, for a small loss in
// quality), stored on every capture in the Inbox (its vector policy, cosmos.bicep, is made with
// this number and cannot change on an existing container: docs/deploy.md says how to move).
param embeddingModel object = {
  name: 'text-embedding-3-small'
  model: 'text-embedding-3-small'
  version: '1'
  sku: 'GlobalStandard'
  capacity: 120 // thousands of tokens per minute: a backfill of 10,000 captures is ~0.5 M
  dimensions: 512
}

@description('Azure OpenAI API version the app calls (structured output needs 2024-08-01-preview or later).')
param openAiApiVersion string = '2024-10-21'

@description('Flex Consumption scale-out limit.')
param maximumInstanceCount int = 40

// Sizing from bench/HISTORY.md ("Streams per instance"), where one worker process held N open
// streams at once. Python's default on Flex is one HTTP invocation per instance, and every
// stream here stays open (a capture for the model's seconds, an events feed up to 120 s), so
// each stream would hold, and bill, a whole instance. Memory is not what limits: 128 streams
// peaked at 156 MiB RSS. CPU is: with a 300 ms model, 16 captures at once took 59 % of a core
// (outcome p95 578 ms against 340 ms alone, first byte p95 43 ms), 32 took 84 % and the
// outcome p95 doubled. CPU comes with memory, so 2048 keeps a whole core's share; 512 would
// saturate at a few streams. 16 streams keep headroom for slower models and idle feeds (128
// idle feeds cost 33 % of a core).
@description('Memory per instance (CPU comes in proportion); see the comment above.')
param instanceMemoryMB int = 2048

@description('HTTP invocations (open streams) one instance takes before Flex adds another.')
param httpPerInstanceConcurrency int = 16

// 0 scales to zero: one person's captures cost about a dollar a month on demand, and one
// always-ready 2048 MB instance would add about $21 (2 GB, $0.000004 per GB-s) to spare the
// first capture after a quiet spell a cold start (bench/HISTORY.md, "Cold start and costs").
@description('Instances kept running for the HTTP functions; 0 scales to zero (bench/HISTORY.md, "Cold start and costs").')
param alwaysReadyHttpInstances int = 0

@description('Region of the web app\'s Static Web App (one of the few it offers; pages are served globally).')
@allowed([
  'westeurope'
  'eastus2'
  'centralus'
  'westus2'
  'eastasia'
])
param webLocation string = 'westeurope'

// What the app expects to exist (devhost/provision.py makes the same locally).
var cosmosDatabase = 'secondbrain'
var cosmosContainers = [
  'Inbox'
  'People'
  'Projects'
  'Ideas'
  'Admin'
  'PushSubscriptions'
  'Preferences'
  'Digests'
  'AskThreads'
]
var voiceContainer = 'voice-notes'
// Where a transcribed voice note's recording is kept (shared/settings.py RECORDINGS_CONTAINER).
var recordingsContainer = 'voice-recordings'
var deploymentContainer = 'app-package'
var queues = [
  'captures-classify'
  'captures-classify-poison'
  'captures-outcomes'
  'captures-outcomes-poison'
  'webjobs-blobtrigger-poison'
  'digests'
  'digests-poison'
  'captures-transcribe'
  'captures-transcribe-poison'
  'embeddings-backfill'
  'embeddings-backfill-poison'
]

var tags = {
  'azd-env-name': environmentName
}
var token = toLower(uniqueString(subscription().id, environmentName, location))

resource group 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: 'rg-${environmentName}'
  location: location
  tags: tags
}

module identity 'identity.bicep' = {
  name: 'identity'
  scope: group
  params: {
    name: 'id-${token}'
    location: location
    tags: tags
  }
}

// The web app first: its origin is the only one the API and Blob storage let browsers in from.
module web 'web.bicep' = {
  name: 'web'
  scope: group
  params: {
    name: 'swa-${token}'
    location: webLocation
    tags: tags
  }
}

module storage 'storage.bicep' = {
  name: 'storage'
  scope: group
  params: {
    name: 'st${token}'
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    containers: [
      voiceContainer
      recordingsContainer
      deploymentContainer
    ]
    queues: queues
    corsOrigin: web.outputs.origin
  }
}

module cosmos 'cosmos.bicep' = {
  name: 'cosmos'
  scope: group
  params: {
    name: 'cosmos-${token}'
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    databaseName: cosmosDatabase
    containers: cosmosContainers
    embeddingDimensions: embeddingModel.dimensions
  }
}

module openAi 'openai.bicep' = {
  name: 'openai'
  scope: group
  params: {
    name: 'oai-${token}'
    location: empty(openAiLocation) ? location : openAiLocation
    tags: tags
    principalId: identity.outputs.principalId
    chatDeployment: chatModel
    transcribeDeployment: transcribeModel
    embeddingDeployment: embeddingModel
  }
}

module monitoring 'monitoring.bicep' = {
  name: 'monitoring'
  scope: group
  params: {
    name: token
    location: location
    tags: tags
    principalId: identity.outputs.principalId
  }
}

module keyVault 'keyvault.bicep' = {
  name: 'keyvault'
  scope: group
  params: {
    name: 'kv-${token}'
    location: location
    tags: tags
    principalId: identity.outputs.principalId
  }
}

module app 'function.bicep' = {
  name: 'function'
  scope: group
  params: {
    name: 'func-${token}'
    location: location
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageBlobEndpoint: storage.outputs.blobEndpoint
    storageQueueEndpoint: storage.outputs.queueEndpoint
    deploymentContainer: deploymentContainer
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabase: cosmos.outputs.databaseName
    openAiEndpoint: openAi.outputs.endpoint
    openAiApiVersion: openAiApiVersion
    chatDeployment: openAi.outputs.chatDeployment
    transcribeDeployment: openAi.outputs.transcribeDeployment
    embeddingDeployment: openAi.outputs.embeddingDeployment
    embeddingDimensions: embeddingModel.dimensions
    appInsightsConnectionString: monitoring.outputs.connectionString
    apiKeys: apiKeys
    vapidPrivateKeyUri: keyVault.outputs.vapidPrivateKeyUri
    vapidPublicKeyUri: keyVault.outputs.vapidPublicKeyUri
    vapidSubject: vapidSubject
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    alwaysReadyHttpInstances: alwaysReadyHttpInstances
    corsOrigin: web.outputs.origin
  }
}

// azd keeps these in the environment; the postdeploy hook and docs/deploy.md use them.
output AZURE_LOCATION string = location
output AZURE_RESOURCE_GROUP string = group.name
output FUNCTION_APP_NAME string = app.outputs.name
output API_BASE_URL string = 'https://${app.outputs.defaultHostName}/api'
// The MCP server (the MCP extension's webhook, docs/mcp.md): a client sends the extension's
// `mcp_extension` system key as x-functions-key and the user's own API key as X-API-Key.
output MCP_URL string = 'https://${app.outputs.defaultHostName}/runtime/webhooks/mcp'
output WEB_APP_URL string = web.outputs.origin
output WEB_APP_NAME string = web.outputs.name
output STORAGE_ACCOUNT_NAME string = storage.outputs.name
output VOICE_NOTES_TOPIC_NAME string = storage.outputs.eventTopicName
output VOICE_NOTES_CONTAINER string = voiceContainer
output VOICE_RECORDINGS_CONTAINER string = recordingsContainer
output KEY_VAULT_NAME string = keyVault.outputs.name
