// Keeps this device's captures in step with the API: what the inbox (here or on another
// device) moved, filed or deleted shows on the Capture screen too. The API owns a capture
// once it has settled; the device only remembers which ones it made.
import { ApiError, getCapture, getInbox, type InboxItem } from "./api";
import * as store from "./store";
import type { LocalCapture } from "./store";

// The flows own a capture until it settles; after that the API's word wins.
const settled = (c: LocalCapture) => Boolean(c.captureId) && ["filed", "kept", "asking"].includes(c.phase);

/** The inbox item as it now stands, written over the device's card of it. */
export function apply(item: InboxItem): void {
  const c = store.all().find((local) => local.captureId === item.id);
  if (!c || !settled(c)) return;
  const seen = { title: item.title ?? undefined, text: c.text || item.text || "" };
  if (item.status === "filed") {
    store.update(c.id, { ...seen, phase: "filed", bucket: item.filedBucket ?? undefined, provisional: false, interrupt: undefined, note: undefined });
  } else {
    // Still unconfirmed; an open question on this card stays open, unless it was answered or
    // dismissed elsewhere (the capture's page, another device).
    const kept = item.status === "needs_review" || item.status === "needs_clarification" || item.status === "unresolved";
    const open = item.interrupts?.find((i) => i.status === "open");
    const stillAsking = c.phase === "asking" && (item.interrupts === undefined || open?.id === c.interrupt?.id);
    if (kept && !stillAsking) {
      const answered = c.phase === "asking" ? { phase: "kept" as const, interrupt: undefined, note: undefined } : {};
      store.update(c.id, { ...seen, ...answered, bucket: item.filedBucket ?? undefined, provisional: item.status === "needs_review" });
    }
  }
}

/** Deleted from the API: the card goes too. */
export function forget(captureId: string): void {
  const c = store.all().find((local) => local.captureId === captureId);
  if (c) store.remove(c.id);
}

/** Asks the API how this device's settled captures stand: one inbox page covers the recent
 * ones; a capture older than that page is asked for alone. Quiet when offline. */
export async function catchUp(): Promise<void> {
  const mine = store.all().filter(settled);
  if (mine.length === 0 || !navigator.onLine) return;
  try {
    const page = await getInbox(null, 100);
    const known = new Map(page.items.map((item) => [item.id, item]));
    for (const c of mine) {
      const id = c.captureId!;
      const item = known.get(id) ?? (page.continuationToken ? await fetchOne(id) : null);
      if (item) apply(item);
      else forget(id);
    }
  } catch {
    // Offline or refused: the cards stay as they were until the next look.
  }
}

async function fetchOne(id: string): Promise<InboxItem | null> {
  try {
    return await getCapture(id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}
