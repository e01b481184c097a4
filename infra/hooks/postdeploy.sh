#!/bin/sh
# azd postdeploy: subscribe the voice-note blob trigger to uploads (infra/events.bicep).
# The webhook's key appears once the deployed host has loaded the blob trigger, so wait
# for it first. azd passes its environment (main.bicep's outputs) as variables.
set -eu

: "${AZURE_RESOURCE_GROUP:?run through azd (azd up / azd deploy)}"
: "${FUNCTION_APP_NAME:?missing: run azd provision first}"
: "${VOICE_NOTES_TOPIC_NAME:?missing: run azd provision first}"
: "${VOICE_NOTES_CONTAINER:?missing: run azd provision first}"

echo "Waiting for $FUNCTION_APP_NAME to load its blob trigger..."
tries=0
until key=$(az functionapp keys list -g "$AZURE_RESOURCE_GROUP" -n "$FUNCTION_APP_NAME" \
    --query systemKeys.blobs_extension -o tsv 2>/dev/null) && [ -n "$key" ]; do
  tries=$((tries + 1))
  if [ "$tries" -ge 30 ]; then
    echo "The blobs_extension key did not appear in 5 minutes: is the app running?" >&2
    exit 1
  fi
  sleep 10
done

echo "Subscribing voice-note uploads to Event Grid..."
az deployment group create \
  --resource-group "$AZURE_RESOURCE_GROUP" \
  --name voice-notes-events \
  --template-file infra/events.bicep \
  --parameters functionAppName="$FUNCTION_APP_NAME" \
    topicName="$VOICE_NOTES_TOPIC_NAME" \
    container="$VOICE_NOTES_CONTAINER" \
  --output none
echo "Voice notes are wired: uploads to $VOICE_NOTES_CONTAINER reach voice_note_uploaded."

# The MCP server: its endpoint, and where its key is (never printed: it is a secret). Each
# user adds their own API key (X-API-Key), which picks whose captures a call reads.
echo "MCP server: ${MCP_URL:-https://<app>/runtime/webhooks/mcp} (docs/mcp.md)."
echo "Its system key: az functionapp keys list -g $AZURE_RESOURCE_GROUP -n $FUNCTION_APP_NAME --query systemKeys.mcp_extension -o tsv"
