// Storage for the Functions host and the app: voice notes' uploads and their recordings (kept
// apart, by a lifecycle policy per retention class), the classify, outcome and transcribe
// queues with their poison queues, the deployment package, and the Event Grid topic that
// tells the voice-notes blob trigger about uploads. No account keys: identity only.

param name string
param location string
param tags object
param principalId string

@description('Blob containers: voice notes\' uploads and kept recordings, and the package Flex Consumption deploys from.')
param containers array
@description('Queues the app and the host use, poison queues included.')
param queues array
@description('The web app\'s origin (https://host): browsers PUT voice notes from it, and only it.')
param corsOrigin string

// Built-in roles (fixed ids). Blob Data Owner, not Contributor: the app signs upload URLs
// with a user delegation key, and the host keeps its keys and leases in blobs.
var storageBlobDataOwner = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
var storageQueueDataContributor = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  // checkov:skip=CKV_AZURE_35: phones PUT voice notes straight to it with a SAS, from anywhere
  // checkov:skip=CKV_AZURE_59: same: public endpoint, identity or SAS only (no shared keys)
  // checkov:skip=CKV_AZURE_206: LRS: recordings are a copy of what the phone sent (the words
  // are in Cosmos DB); jobs live seconds
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    // The phone PUTs a voice note to its upload URL with the upload headers; the SAS can only
    // create, so PUT is the one method. The same rule as devhost/provision.py's locally.
    cors: {
      corsRules: [
        {
          allowedOrigins: [
            corsOrigin
          ]
          allowedMethods: [
            'PUT'
          ]
          allowedHeaders: [
            'content-type'
            'x-ms-blob-type'
            'x-ms-meta-*'
          ]
          exposedHeaders: [
            'etag'
            'x-ms-request-id'
            'x-ms-error-code'
          ]
          maxAgeInSeconds: 3600
        }
      ]
    }
  }
}

resource blobContainers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [
  for container in containers: {
    parent: blobService
    name: container
    properties: {
      publicAccess: 'None'
    }
  }
]

// Voice notes' recordings, kept beside their transcripts (issue 44) in their own container
// (voice-recordings: the blob trigger moves each there once transcribed, so the upload
// container holds only notes in flight, and these rules touch no upload; recordings kept in
// voice-notes before that are the retention timer's). A lifecycle policy cannot read a user's
// preference: it filters by name prefix or blob index tag, at most 100 rules an account. So each recording carries a `retention` tag, the smallest of these classes at least
// as long as its owner's retention (shared/domain/preferences.py RETENTION_CLASSES; 'forever'
// has no rule), set by the blob trigger once transcribed and kept up to date by the daily
// retention timer, which also deletes on the exact day a user chose (the policy runs once a
// day, and may take up to a day more: it is the backstop, never early).
resource lifecycle 'Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    policy: {
      rules: [
      {
        // Every recording goes to the Cool tier once it is a month old: played back rarely
        // after that, at half the storage price (a read costs more, and a Cool blob deleted
        // before 30 days there pays the rest: none is, the shortest retention being 30 days).
        name: 'voice-recordings-cool'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
          }
          actions: {
            baseBlob: {
              tierToCool: {
                daysAfterCreationGreaterThan: 30
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-30'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '30'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 30
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 30
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-90'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '90'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 90
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 90
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-365'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '365'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 365
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 365
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-730'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '730'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 730
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 730
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-1825'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '1825'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 1825
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 1825
              }
            }
          }
        }
      }
      {
        name: 'voice-recordings-retention-3650'
        enabled: true
        type: 'Lifecycle'
        definition: {
          filters: {
            blobTypes: [
              'blockBlob'
            ]
            prefixMatch: [
              'voice-recordings/'
            ]
            blobIndexMatch: [
              {
                name: 'retention'
                op: '=='
                value: '3650'
              }
            ]
          }
          actions: {
            baseBlob: {
              delete: {
                daysAfterCreationGreaterThan: 3650
              }
            }
            snapshot: {
              delete: {
                daysAfterCreationGreaterThan: 3650
              }
            }
          }
        }
      }
      ]
    }
  }
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
}

resource storageQueues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [
  for queue in queues: {
    parent: queueService
    name: queue
  }
]

// Flex Consumption runs blob triggers from Event Grid only; the subscription itself is made
// after the code is deployed (events.bicep), because its webhook key exists only then.
resource uploads 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: 'evgt-${name}'
  location: location
  tags: tags
  properties: {
    source: account.id
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

resource blobOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, storageBlobDataOwner)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageBlobDataOwner)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource queueContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(account.id, principalId, storageQueueDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageQueueDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
output queueEndpoint string = account.properties.primaryEndpoints.queue
output eventTopicName string = uploads.name
