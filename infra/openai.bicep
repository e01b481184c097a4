// Azure OpenAI: one chat deployment (classification, structured output), one transcription
// deployment (voice notes) and one embeddings deployment (text-embedding-3-small, asked for
// 512 dimensions: search by meaning). Keys are off; the app's identity may only call them.

param name string
param location string
param tags object
param principalId string

param chatDeployment object
param transcribeDeployment object
param embeddingDeployment object

var cognitiveServicesOpenAIUser = '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'

resource account 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  // checkov:skip=CKV_AZURE_134: Flex Consumption reaches it over the public endpoint (no VNet here)
  // checkov:skip=CKV_AZURE_238: the account calls nothing, so it needs no identity of its own
  name: name
  location: location
  tags: tags
  kind: 'OpenAI'
  sku: {
    name: 'S0'
  }
  properties: {
    // A custom subdomain is what Entra ID tokens are issued for.
    customSubDomainName: name
    disableLocalAuth: true
    publicNetworkAccess: 'Enabled'
  }
}

resource chat 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: chatDeployment.name
  sku: {
    name: chatDeployment.sku
    capacity: chatDeployment.capacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: chatDeployment.model
      version: chatDeployment.version
    }
  }
}

resource transcribe 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: transcribeDeployment.name
  sku: {
    name: transcribeDeployment.sku
    capacity: transcribeDeployment.capacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: transcribeDeployment.model
      version: transcribeDeployment.version
    }
  }
  // One deployment at a time: the account refuses concurrent deployment changes.
  dependsOn: [
    chat
  ]
}

resource embedding 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: account
  name: embeddingDeployment.name
  sku: {
    name: embeddingDeployment.sku
    capacity: embeddingDeployment.capacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: embeddingDeployment.model
      version: embeddingDeployment.version
    }
  }
  dependsOn: [
    transcribe
  ]
}

resource openAIUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, cognitiveServicesOpenAIUser)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', cognitiveServicesOpenAIUser)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output endpoint string = account.properties.endpoint
output chatDeployment string = chat.name
output transcribeDeployment string = transcribe.name
output embeddingDeployment string = embedding.name
