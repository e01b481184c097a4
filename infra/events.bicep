// Subscribes the voice-notes blob trigger to uploads: Event Grid calls the host's blobs
// webhook on each new blob. Run by hooks/postdeploy.sh once the code is deployed, because
// the webhook's key (blobs_extension) exists only after the host has loaded the trigger.

param functionAppName string
param topicName string
param container string
@description('The function with the Event Grid blob trigger (shared/entrypoints/voice_trigger.py).')
param functionName string = 'voice_note_uploaded'

resource app 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' existing = {
  name: topicName
}

var webhookKey = listKeys('${app.id}/host/default', '2024-04-01').systemKeys.blobs_extension

resource uploads 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = {
  parent: topic
  name: 'voice-notes-uploaded'
  properties: {
    destination: {
      endpointType: 'WebHook'
      properties: {
        endpointUrl: 'https://${app.properties.defaultHostName}/runtime/webhooks/blobs?functionName=Host.Functions.${functionName}&code=${webhookKey}'
      }
    }
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobCreated'
      ]
      subjectBeginsWith: '/blobServices/default/containers/${container}/blobs/'
    }
    eventDeliverySchema: 'EventGridSchema'
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}
