// Stands in for @ag-ui/proto in the bundle (web/build.mjs). Our API streams AG-UI as SSE only
// (docs/contract.md), and @ag-ui/client asks for SSE (Accept: text/event-stream); it reaches
// for the protobuf codec only when a server answers with the protobuf media type. Leaving the
// codec out saves about 15 % of the app's gzipped JavaScript; a server that did answer in protobuf
// gets a clear error instead.
export const AGUI_MEDIA_TYPE = "application/vnd.ag-ui.event+proto";

export class AGUIUnknownEventTypeError extends Error {}

export function decode(): never {
  throw new Error("This app reads AG-UI over SSE only; the server answered in protobuf.");
}

export function encode(): never {
  throw new Error("This app sends AG-UI as JSON only.");
}
