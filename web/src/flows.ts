// What happens to a capture between the tap and its outcome: text runs, voice notes, the
// outbox, answers to questions. Everything is written to the store as it happens, so the
// screen (and a reload) always shows where each capture is.
import { buildResumeArray, randomUUID, type Interrupt, type Message } from "@ag-ui/client";
import { ApiError, NetworkError, getCapture, startVoiceNote, uploadAudio } from "./api";
import { captureAgent, feedAgent, run, type Progress, type RunEnd } from "./agui";
import { dropAudio, loadAudio, saveAudio } from "./audio";
import * as store from "./store";
import type { LocalCapture } from "./store";

export type ResumeResponse = { status: "resolved"; payload: unknown } | { status: "cancelled" };

const inFlight = new Set<string>();
const RETRY_MS = 15_000;

export function captureText(text: string): void {
  const id = randomUUID();
  store.add({
    id,
    kind: "text",
    text,
    threadId: `t-${id}`, // each capture its own thread: one open question never blocks the next
    runId: id,
    createdAt: Date.now(),
    phase: "waiting",
    steps: [],
  });
  void send(id);
}

export async function captureVoice(audio: Blob, contentType: string, seconds: number): Promise<void> {
  const id = randomUUID();
  // Stored before anything is sent: if the phone is offline or the app is closed, the
  // recording waits in the outbox.
  await saveAudio(id, audio);
  store.add({
    id,
    kind: "voice",
    text: "",
    threadId: `t-${id}`,
    runId: id,
    createdAt: Date.now(),
    phase: "waiting",
    steps: [],
    seconds,
    contentType,
  });
  void send(id);
}

/** Sends every capture still in the outbox: on start, and when the network comes back. A
 * capture left "sending" by a closed app is sent again: its ids make the retry land on the
 * same capture, so it files once. */
export function flushOutbox(): void {
  for (const c of store.all()) {
    if (c.phase === "waiting" || c.phase === "sending") void send(c.id);
  }
}

export async function send(id: string): Promise<void> {
  const c = store.get(id);
  if (!c || inFlight.has(id)) return;
  if (!navigator.onLine) {
    store.update(id, { phase: "waiting", note: undefined });
    return;
  }
  inFlight.add(id);
  try {
    if (c.kind === "text") await sendText(c);
    else await sendVoice(c);
  } catch (error) {
    failed(id, error);
  } finally {
    inFlight.delete(id);
  }
}

async function sendText(c: LocalCapture): Promise<void> {
  store.update(c.id, { phase: "sending", steps: [], note: undefined });
  const message = { id: `m-${c.id}`, role: "user" as const, content: c.text };
  const agent = captureAgent(c.threadId, [message], { "Idempotency-Key": c.id });
  const end = await run(agent, { runId: c.runId }, progressOf(c.id));
  await settle(c.id, end, agent.messages);
}

async function sendVoice(c: LocalCapture): Promise<void> {
  store.update(c.id, { phase: "sending", steps: [{ name: "Upload", done: false }], note: undefined });
  let captureId = c.captureId;
  if (!c.uploaded) captureId = await upload(c);
  store.update(c.id, { uploaded: true, captureId, steps: [{ name: "Upload", done: true }] });
  await follow(c.id, captureId!);
}

/** Starts the voice note and PUTs its audio; the capture's id. */
async function upload(c: LocalCapture): Promise<string> {
  // A retry whose first attempt already got the audio there must not upload again.
  if (c.captureId && (await arrived(c.captureId))) return c.captureId;
  const audio = await loadAudio(c.id);
  if (!audio) throw new ApiError(0, "The recording is no longer on this device.");
  const started = await startVoiceNote(c.contentType ?? audio.type, c.threadId, c.id);
  store.update(c.id, { captureId: started.captureId });
  try {
    await uploadAudio(started, audio);
  } catch (error) {
    // The upload URL creates the blob once: a refusal may mean an earlier attempt made it.
    if (!(error instanceof ApiError && (await arrived(started.captureId)))) throw error;
  }
  await dropAudio(c.id);
  return started.captureId;
}

async function arrived(captureId: string): Promise<boolean> {
  try {
    return (await getCapture(captureId)).status !== "awaiting_upload";
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}

/** Follows a capture's events feed to its outcome (a voice note, or a queued capture). */
async function follow(id: string, captureId: string): Promise<void> {
  const c = store.get(id)!;
  const agent = feedAgent(captureId, c.threadId);
  const end = await run(agent, {}, progressOf(id));
  await settle(id, end, agent.messages);
  if (!store.get(id)?.text) await transcript(id, captureId);
}

/** A voice note's transcript is on its inbox item (a run that asks carries it in its state
 * snapshot; one that files it does not). Shown with the note; not worth failing over. */
async function transcript(id: string, captureId: string): Promise<void> {
  try {
    const item = await getCapture(captureId);
    if (item.text) store.update(id, { text: item.text });
  } catch {
    // The outcome is what matters; the card simply shows "Voice note".
  }
}

/** Answers the capture's open question (or dismisses it) on its thread: an AG-UI resume. */
export async function answer(id: string, response: ResumeResponse): Promise<void> {
  const c = store.get(id);
  if (!c?.interrupt || inFlight.has(id)) return;
  const interrupt: Interrupt = c.interrupt;
  inFlight.add(id);
  try {
    store.update(id, { phase: "sending", steps: [], note: undefined });
    const { end, messages } = await resumeThread(c.threadId, c.messages ?? [], interrupt, response, progressOf(id));
    if (end.kind === "finished") {
      await settle(id, end, messages);
    } else {
      // Not answered: the question stays open, with what went wrong.
      store.update(id, { phase: "asking", note: describe(end) });
    }
  } finally {
    inFlight.delete(id);
  }
}

/** The AG-UI resume that answers `interrupt` on its thread: how the run ended, and the thread's
 * messages after it. */
export async function resumeThread(
  threadId: string,
  messages: Message[],
  interrupt: Interrupt,
  response: ResumeResponse,
  progress: Progress = { step: () => undefined },
): Promise<{ end: RunEnd; messages: Message[] }> {
  const agent = captureAgent(threadId, messages);
  // The client checks a resume against the questions it knows are open.
  agent.pendingInterrupts = [interrupt];
  const resume = buildResumeArray([interrupt], { [interrupt.id]: response });
  const end = await run(agent, { resume }, progress);
  return { end, messages: agent.messages };
}

/** A capture's open question as the API asks it (the interrupt, with its schema and the
 * buckets it offers): its events feed replayed, which ends with the question. None when it
 * asks nothing (any more). */
export async function openQuestion(captureId: string, threadId: string): Promise<Interrupt | null> {
  const end = await run(feedAgent(captureId, threadId), {}, { step: () => undefined });
  if (end.kind === "failed") throw end.error;
  return end.kind === "finished" ? (end.interrupts[0] ?? null) : null;
}

/** What went wrong with a run, in words safe to show. */
export function describeEnd(end: RunEnd): string {
  return describe(end);
}

function progressOf(id: string): Progress {
  return {
    step(name, done) {
      const steps = [...(store.get(id)?.steps ?? [])];
      const index = steps.findIndex((s) => s.name === name);
      if (index >= 0) steps[index] = { name, done };
      else steps.push({ name, done });
      store.update(id, { steps });
    },
  };
}

async function settle(id: string, end: RunEnd, messages: LocalCapture["messages"]): Promise<void> {
  if (end.kind !== "finished") {
    failed(id, end.kind === "failed" ? end.error : end);
    return;
  }
  const { result, interrupts, state } = end;
  const captureId = result.inboxItemId ?? store.get(id)?.captureId;
  // The STATE_SNAPSHOT of an asking run is the capture itself: its text and title.
  const snapshot = state as { text?: string; title?: string; filedBucket?: string };
  // Only what this run told: a dismissal's result names no bucket, and the one the capture
  // is in for now stays on the card.
  const known = defined({
    captureId,
    messages,
    bucket: result.bucket ?? snapshot.filedBucket,
    title: result.title ?? snapshot.title,
    text: store.get(id)?.kind === "voice" ? snapshot.text : undefined,
  });
  if (interrupts.length > 0) {
    const interrupt = interrupts[0];
    const provisional = (interrupt.metadata as { kind?: string } | undefined)?.kind === "bucket";
    store.update(id, { ...known, phase: "asking", interrupt, provisional });
    return;
  }
  switch (result.status) {
    case "filed":
      store.update(id, { ...known, phase: "filed", provisional: false, interrupt: undefined });
      break;
    case "queued":
    case "received":
      // The model was busy: the API's worker files it; its feed tells us when.
      store.update(id, { ...known, phase: "sending", queued: true, note: "Filing shortly…" });
      if (captureId) await follow(id, captureId);
      break;
    case "needs_review":
      store.update(id, { ...known, phase: "kept", provisional: true, interrupt: undefined });
      break;
    default: // needs_clarification (dismissed), unresolved
      store.update(id, {
        ...known,
        phase: "kept",
        interrupt: undefined,
        note: "Left in your inbox: open it there to move it to a bucket.",
      });
  }
}

function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

let retryTimer = 0;

function failed(id: string, error: unknown): void {
  if (error instanceof NetworkError) {
    // Offline, or the API unreachable: back to the outbox, sent again when online. When the
    // phone says it is online, no `online` event will come: try again in a while instead.
    store.update(id, {
      phase: "waiting",
      note: navigator.onLine ? "The API could not be reached; it will be sent again." : undefined,
    });
    if (navigator.onLine && !retryTimer) {
      retryTimer = window.setTimeout(() => {
        retryTimer = 0;
        flushOutbox();
      }, RETRY_MS);
    }
    return;
  }
  store.update(id, { phase: "failed", note: describe(error) });
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === "object" && "kind" in error) {
    const end = error as RunEnd;
    if (end.kind === "error") return end.message || `The run failed (${end.code}).`;
    if (end.kind === "failed") return describe(end.error);
  }
  return "Something went wrong.";
}
