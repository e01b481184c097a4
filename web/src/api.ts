// The REST half of the API (inbox, captures, voice notes) and the error types every call,
// AG-UI runs included, is reduced to.
import { loadSettings } from "./settings";

/** One field a 422 refused: where (`title`, `dueDate`…) and why. */
export interface FieldError {
  loc: string;
  msg: string;
}

/** The API answered, and said no: problem+json's `detail` is safe to show (docs/contract.md),
 * and so are the field errors of a 422. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** No answer at all: offline, the host unreachable, or a CORS refusal (the browser does not
 * say which). A capture that meets this waits in the outbox. */
export class NetworkError extends Error {
  constructor(message = "The API could not be reached.") {
    super(message);
    this.name = "NetworkError";
  }
}

export const BUCKETS = ["People", "Projects", "Ideas", "Admin"] as const;
export type Bucket = (typeof BUCKETS)[number];

/** An inbox item, as GET /api/captures/{id} answers (the fields this app reads). */
export interface InboxItem {
  id: string;
  source: "text" | "voice";
  text: string | null;
  threadId: string | null;
  status: string;
  outcome: string | null;
  filedBucket: Bucket | null;
  chosenBy: string | null;
  confidence: number | null;
  title: string | null;
  questionText: string | null;
  error: string | null;
  clarifications: { text: string }[] | null;
  /** The questions put to the user, oldest first; the last one may be open. */
  interrupts?: { id: string; kind: string; status: string; buckets?: Bucket[] }[];
  /** What its filed item holds (as the filed item names them); an older API leaves out
   * `nextAction`, and then the filed item is asked. */
  dueDate?: string | null;
  people?: string[] | null;
  nextAction?: string | null;
  createdAt: string;
  /** Voice: the kept recording's blob (null once deleted), its times, and a transcription
   * asked for again (pending while later than `transcribedAt`). */
  audioBlob?: string | null;
  audioDeletedAt?: string | null;
  transcriptSegments?: Segment[] | null;
  transcribedAt?: string | null;
  transcriptionRequestedAt?: string | null;
}

/** A stretch of a transcript: from `start` to `end` seconds into the recording. */
export interface Segment {
  start: number;
  end: number;
  text: string;
}

export interface InboxPage {
  items: InboxItem[];
  continuationToken: string | null;
}

export interface VoiceUpload {
  captureId: string;
  uploadUrl: string;
  eventsUrl: string;
  uploadHeaders: Record<string, string>;
}

const keyRefusedListeners: (() => void)[] = [];

/** Called whenever the API answers 401: the key is wrong (or was revoked). */
export function onKeyRefused(listener: () => void): void {
  keyRefusedListeners.push(listener);
}

function settings() {
  const saved = loadSettings();
  if (!saved) throw new ApiError(0, "Set the API address and key in Settings first.");
  return saved;
}

export function apiUrl(path: string): string {
  return `${settings().apiBase}${path}`;
}

/** `eventsUrl` is relative to the API's host (the API cannot know its public name). */
export function hostUrl(path: string): string {
  return new URL(path, settings().apiBase).toString();
}

export function authHeaders(): Record<string, string> {
  return { "X-API-Key": settings().apiKey };
}

/** fetch, with failures turned into NetworkError and refusals into ApiError. The AG-UI agents
 * use it too, so a run's 401 reads exactly like an inbox's. */
export async function checkedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(input, init);
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new NetworkError();
  }
  if (!response.ok) throw await refusal(response);
  return response;
}

async function refusal(response: Response): Promise<ApiError> {
  let detail = "";
  let code: string | undefined;
  let errors: FieldError[] = [];
  try {
    const problem = await response.json();
    detail = typeof problem.detail === "string" ? problem.detail : (problem.title ?? "");
    code = typeof problem.code === "string" ? problem.code : undefined;
    if (Array.isArray(problem.errors)) {
      errors = problem.errors
        .filter((e: unknown): e is FieldError => typeof (e as FieldError)?.msg === "string")
        .map((e: FieldError) => ({ loc: String(e.loc ?? ""), msg: e.msg }));
    }
  } catch {
    // Not problem+json (a proxy's page, a bare 404): the status says enough.
  }
  if (response.status === 401) {
    keyRefusedListeners.forEach((listener) => listener());
    return new ApiError(401, "The API refused this key. Check it in Settings.", code);
  }
  if (response.status === 429) {
    return new ApiError(429, "Too many requests just now; try again in a moment.", code);
  }
  return new ApiError(response.status, detail || `The API answered ${response.status}.`, code, errors);
}

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  Object.assign(headers, extra);
  const response = await checkedFetch(apiUrl(path), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (response.status === 204 ? undefined : await response.json()) as T;
}

export function getInbox(continuationToken: string | null, limit = 20): Promise<InboxPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (continuationToken) query.set("continuationToken", continuationToken);
  return call("GET", `/inbox?${query}`);
}

export function getCapture(id: string): Promise<InboxItem> {
  return call("GET", `/captures/${encodeURIComponent(id)}`);
}

export function pickBucket(id: string, bucket: Bucket): Promise<InboxItem> {
  return call("POST", `/captures/${encodeURIComponent(id)}/bucket`, { bucket });
}

export function deleteCapture(id: string): Promise<void> {
  return call("DELETE", `/captures/${encodeURIComponent(id)}`);
}

/** GET /api/captures/{id}/audio: the recording, fetched with the key (an <audio src> could not
 * send it), for a Blob URL. */
export async function getAudio(id: string): Promise<Blob> {
  const response = await checkedFetch(apiUrl(`/captures/${encodeURIComponent(id)}/audio`), { headers: authHeaders() });
  return response.blob();
}

/** POST /api/captures/{id}/transcribe: a new transcript is on its way (202). */
export function transcribeAgain(id: string): Promise<InboxItem> {
  return call("POST", `/captures/${encodeURIComponent(id)}/transcribe`);
}

export function deleteAudio(id: string): Promise<void> {
  return call("DELETE", `/captures/${encodeURIComponent(id)}/audio`);
}

/** POST /api/captures/{id}/spoken-answer: the words of a recorded answer, to send as typed. */
export async function spokenAnswer(id: string, audio: Blob, contentType: string): Promise<{ text: string }> {
  const form = new FormData();
  const extension = contentType.split("/")[1] ?? "webm";
  form.append("file", new File([audio], `answer.${extension}`, { type: contentType }));
  const response = await checkedFetch(apiUrl(`/captures/${encodeURIComponent(id)}/spoken-answer`), {
    method: "POST",
    headers: authHeaders(),
    body: form,
  });
  return response.json();
}

/** What the API keeps of this device's push subscription (never its keys). */
export interface PushDevice {
  id: string;
  endpoint: string;
}

/** GET /api/push/key: the key to subscribe with. A public route, so no key is sent. */
export async function getPushKey(): Promise<string> {
  const response = await checkedFetch(apiUrl("/push/key"));
  return ((await response.json()) as { publicKey: string }).publicKey;
}

export function postPushSubscription(subscription: PushSubscriptionJSON): Promise<PushDevice> {
  return call("POST", "/push/subscriptions", subscription);
}

export function deletePushSubscription(id: string): Promise<void> {
  return call("DELETE", `/push/subscriptions/${encodeURIComponent(id)}`);
}

/** Checks the address and the key with the cheapest authenticated call there is. */
export async function checkConnection(): Promise<void> {
  await getInbox(null, 1);
}

/** POST /api/voice-notes. The Idempotency-Key makes a retry (after a lost answer, or from
 * the outbox) reach the same capture, with a fresh upload URL. */
export async function startVoiceNote(
  contentType: string,
  threadId: string,
  idempotencyKey: string,
): Promise<VoiceUpload> {
  const response = await checkedFetch(apiUrl("/voice-notes"), {
    method: "POST",
    headers: {
      ...authHeaders(),
      "Content-Type": "application/json",
      "Idempotency-Key": idempotencyKey,
    },
    body: JSON.stringify({ contentType, threadId }),
  });
  return response.json();
}

/** PUT the audio to its upload URL, with every header the API asked for. The URL may only
 * create the blob, never overwrite it: a retry whose first attempt got through is refused,
 * so the caller looks at the capture before blaming the upload. */
export async function uploadAudio(upload: VoiceUpload, audio: Blob): Promise<void> {
  let response: Response;
  try {
    response = await fetch(upload.uploadUrl, {
      method: "PUT",
      headers: upload.uploadHeaders,
      body: audio,
    });
  } catch {
    throw new NetworkError("The recording could not be uploaded.");
  }
  if (response.ok) return;
  throw new ApiError(response.status, `Storage refused the recording (${response.status}).`);
}
