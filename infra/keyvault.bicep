// Key Vault for the app's one secret: the VAPID private key Web Push signs with (and, beside
// it, its public key, so the pair is set in one place). The app never calls the vault: its
// settings are Key Vault references (function.bicep), resolved by the platform with the app's
// identity, which may read secrets and nothing else. The secrets' values are set once, by hand
// (docs/deploy.md: "Web Push in Azure"): no template can make a key pair.

param name string
param location string
param tags object
param principalId string

// Key Vault Secrets User: read secret values; no keys, certificates or management.
var keyVaultSecretsUser = '4633458b-17de-408a-b874-0445c86b69e6'
var privateKeySecret = 'vapid-private-key'
var publicKeySecret = 'vapid-public-key'

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  // checkov:skip=CKV_AZURE_109: Flex Consumption resolves references over the public endpoint (no VNet here); access is Entra ID RBAC only
  // checkov:skip=CKV_AZURE_189: same
  // checkov:skip=CKV_AZURE_110: purge protection would keep `azd down --purge` from removing it; a lost VAPID key is replaced by a new pair (devices subscribe again)
  // checkov:skip=CKV_AZURE_42: same (soft delete is on, purge protection is not)
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 7
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, principalId, keyVaultSecretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsUser)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output name string = vault.name
// Without a version: the app reads the latest, so setting a new one rotates the key.
output vapidPrivateKeyUri string = '${vault.properties.vaultUri}secrets/${privateKeySecret}'
output vapidPublicKeyUri string = '${vault.properties.vaultUri}secrets/${publicKeySecret}'
