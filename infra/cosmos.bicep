// Cosmos DB for NoSQL, serverless: the Inbox, the four buckets, PushSubscriptions, Preferences, Digests, AskThreads,
// all partitioned by user. Keys are off; the app's identity gets the built-in data-plane role,
// nothing more.

param name string
param location string
param tags object
param principalId string

param databaseName string
@description('Container names; each is partitioned by /userId.')
param containers array
@description('Containers whose documents expire by their own `ttl` (defaultTtl -1: none unless set).')
param ttlContainers array = [
  'AskThreads'
]
@description('The container searched with Cosmos DB full-text and vector search (GET /api/search).')
param searchContainer string = 'Inbox'
@description('The dimension of the embeddings stored at /embedding (the embeddings deployment\'s). Fixed once the container exists.')
param embeddingDimensions int

// What search matches and ranks (BM25): the capture's text (a voice note's transcript) and its
// title (searchPaths, each indexed: searchIndexes). The clarification answers sit in an
// array, matched with CONTAINS and not ranked.
var searchIndexes = [
  {
    path: '/text'
  }
  {
    path: '/title'
  }
]
var searchPaths = [
  {
    path: '/text'
    language: 'en-US'
  }
  {
    path: '/title'
    language: 'en-US'
  }
]

// Each capture's meaning: one vector at /embedding (float32, cosine), indexed quantizedFlat
// (every query names one user's partition: up to some tens of thousands of vectors, where
// quantizedFlat is exact enough and cheaper than diskANN). A vector policy and its index
// cannot change on an existing container (docs/deploy.md: new containers, then a copy).
var vectorEmbeddings = [
  {
    path: '/embedding'
    dataType: 'float32'
    distanceFunction: 'cosine'
    dimensions: embeddingDimensions
  }
]
var vectorIndexes = [
  {
    path: '/embedding'
    type: 'quantizedFlat'
  }
]

// Never range-indexed: the ETag, and (in the search container) the vector, which its vector
// index alone serves: 512 range-indexed paths a capture would cost RUs on every write.
var excludedPaths = [
  {
    path: '/"_etag"/?'
  }
]
var searchExcludedPaths = [
  {
    path: '/"_etag"/?'
  }
  {
    path: '/embedding/*'
  }
]

// Cosmos DB Built-in Data Contributor: read and write items, no account or schema changes
// (the containers are made here, never by the app).
var dataContributor = '00000000-0000-0000-0000-000000000002'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  // checkov:skip=CKV_AZURE_99: Flex Consumption reaches it over the public endpoint (no VNet here)
  // checkov:skip=CKV_AZURE_101: same; access is Entra ID only (local auth is off)
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    capabilities: [
      {
        name: 'EnableServerless'
      }
      {
        // FullTextContains / FullTextScore and the full-text index of the search container.
        name: 'EnableNoSQLFullTextSearch'
      }
      {
        // VectorDistance and the vector index of the search container.
        name: 'EnableNoSQLVectorSearch'
      }
    ]
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
  }
}

resource sqlContainers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = [
  for container in containers: {
    parent: database
    name: container
    properties: {
      resource: {
        id: container
        partitionKey: {
          paths: [
            '/userId'
          ]
          kind: 'Hash'
          version: 2
        }
        // The default policy (every path, range) everywhere; the search container adds its
        // full-text index on searchPaths and its vector index on /embedding.
        indexingPolicy: {
          indexingMode: 'consistent'
          automatic: true
          includedPaths: [
            {
              path: '/*'
            }
          ]
          excludedPaths: container == searchContainer ? searchExcludedPaths : excludedPaths
          fullTextIndexes: container == searchContainer ? searchIndexes : []
          vectorIndexes: container == searchContainer ? vectorIndexes : []
        }
        vectorEmbeddingPolicy: {
          vectorEmbeddings: container == searchContainer ? vectorEmbeddings : []
        }
        fullTextPolicy: {
          defaultLanguage: 'en-US'
          fullTextPaths: container == searchContainer ? searchPaths : []
        }
        defaultTtl: contains(ttlContainers, container) ? -1 : null
      }
    }
  }
]

resource appDataAccess 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: account
  name: guid(account.id, principalId, dataContributor)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributor}'
    principalId: principalId
    scope: account.id
  }
}

output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
