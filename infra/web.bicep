// The phone web app (web/, built into web/dist) on Azure Static Web Apps, Free: its static
// files over HTTPS, on an origin of its own. azd deploys the build here (azure.yaml, service
// `web`), and main.bicep gives this origin, and no other, to the API's and Blob storage's CORS.

param name string
@description('Static Web Apps offers a few regions only (the files are served globally).')
param location string
param tags object

resource site 'Microsoft.Web/staticSites@2024-04-01' = {
  name: name
  location: location
  // azd finds where to deploy the `web` service by this tag.
  tags: union(tags, { 'azd-service-name': 'web' })
  sku: {
    name: 'Free'
    tier: 'Free'
  }
  properties: {
    // azd uploads the build with the site's deployment token: no repository is linked.
    provider: 'Custom'
    // No pull-request previews: each would be an origin the CORS settings do not allow.
    stagingEnvironmentPolicy: 'Disabled'
  }
}

output name string = site.name
// What a browser sends as Origin from the app's pages: scheme and host, no trailing slash.
output origin string = 'https://${site.properties.defaultHostname}'
