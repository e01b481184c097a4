// The captures made on this device, newest first: the outbox and the recent list in one.
// Records are small and read on every render, so they live in localStorage; the audio of a
// voice note waiting to be sent is a Blob, so it lives in IndexedDB (audio.ts).
import type { Interrupt, Message } from "@ag-ui/client";

/** Where a capture is, as the user sees it. */
export type Phase =
  | "waiting" // in the outbox: not sent yet (offline, or the API unreachable)
  | "sending" // a run is under way: uploading, transcribing, classifying, answering
  | "filed"
  | "asking" // the run asked something: needs an answer
  | "kept" // settled without a bucket the user confirmed: in the inbox (dismissed, unresolved)
  | "failed";

export interface Step {
  name: string;
  done: boolean;
}

export interface LocalCapture {
  /** Also the capture's Idempotency-Key: every retry reaches the same capture. */
  id: string;
  kind: "text" | "voice";
  text: string;
  threadId: string;
  runId: string;
  createdAt: number;
  phase: Phase;
  steps: Step[];
  captureId?: string;
  bucket?: string;
  title?: string;
  provisional?: boolean; // filed "for now" (low confidence)
  interrupt?: Interrupt; // the open question, while phase is "asking"
  messages?: Message[]; // the thread so far, sent with a resume
  note?: string; // what to tell the user about the last attempt
  queued?: boolean; // the model was busy: the API's worker files it, maybe after the user left
  seconds?: number; // voice: the recording's length
  contentType?: string; // voice: the recording's type
  uploaded?: boolean; // voice: the audio reached storage
}

const STORAGE_KEY = "capture.captures";
const KEEP = 50; // settled captures beyond this are dropped from the device (the inbox has them)

let captures: LocalCapture[] = read();
const listeners: ((id: string | null) => void)[] = [];

function read(): LocalCapture[] {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "[]");
    return Array.isArray(saved) ? saved : [];
  } catch {
    return [];
  }
}

function write(): void {
  const unsettled = (c: LocalCapture) => c.phase === "waiting" || c.phase === "sending";
  // Never drop a capture that has not reached the API yet.
  captures = captures.filter((c, index) => index < KEEP || unsettled(c));
  localStorage.setItem(STORAGE_KEY, JSON.stringify(captures));
}

/** Listen to changes: the id of the capture that changed, or null for the whole list. */
export function subscribe(listener: (id: string | null) => void): void {
  listeners.push(listener);
}

function changed(id: string | null): void {
  listeners.forEach((listener) => listener(id));
}

export function all(): readonly LocalCapture[] {
  return captures;
}

export function get(id: string): LocalCapture | undefined {
  return captures.find((c) => c.id === id);
}

export function add(capture: LocalCapture): void {
  captures = [capture, ...captures];
  write();
  changed(null);
}

export function update(id: string, patch: Partial<LocalCapture>): LocalCapture | undefined {
  const index = captures.findIndex((c) => c.id === id);
  if (index < 0) return undefined;
  captures[index] = { ...captures[index], ...patch };
  write();
  changed(id);
  return captures[index];
}

/** Gone from the API (deleted, here or elsewhere): off the device too. */
export function remove(id: string): void {
  captures = captures.filter((c) => c.id !== id);
  write();
  changed(null);
}

/** Another tab changed the list: take its version. */
export function reload(): void {
  captures = read();
  changed(null);
}
