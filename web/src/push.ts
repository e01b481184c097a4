// Web Push on this device: whether it can be had, turning it on (only from a tap) and off,
// and keeping the API's copy of this device's subscription current.
import { ApiError, deletePushSubscription, getPushKey, postPushSubscription } from "./api";
import { loadSettings } from "./settings";

/** What the Settings switch shows. */
export type PushState = "on" | "off" | "blocked" | "unsupported" | "unconfigured" | "unreachable";

/** This device's subscription as the API knows it, and which API that is. */
interface Saved {
  id: string;
  endpoint: string;
  apiBase: string;
}

const SAVED = "capture.push";
const DECLINED = "capture.push.declined"; // "Not now", or turned off: not offered again

// The API's key, fetched once per address: null when the API has no push set up.
let known: { apiBase: string; key: string | null } | null = null;

export function supported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function saved(): Saved | null {
  try {
    const value = JSON.parse(localStorage.getItem(SAVED) ?? "null");
    return value && typeof value.id === "string" && typeof value.apiBase === "string" ? value : null;
  } catch {
    return null;
  }
}

/** The API's push key; null when it has none. Throws when the API cannot be asked. */
async function serverKey(): Promise<string | null> {
  const apiBase = loadSettings()?.apiBase;
  if (known && known.apiBase === apiBase) return known.key;
  let key: string | null;
  try {
    key = await getPushKey();
  } catch (error) {
    // 503 PUSH_NOT_CONFIGURED; an older API without the route answers 404.
    const absent = error instanceof ApiError && (error.code === "PUSH_NOT_CONFIGURED" || error.status === 404);
    if (!absent) throw error;
    key = null;
  }
  known = { apiBase: apiBase ?? "", key };
  return key;
}

export async function pushState(): Promise<PushState> {
  if (!supported()) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  if (saved()) return "on";
  try {
    return (await serverKey()) === null ? "unconfigured" : "off";
  } catch {
    return "unreachable";
  }
}

/** Whether to offer notifications with a capture that will settle later: only to someone
 * who has not decided yet, on an API that has push. */
export async function mayOffer(): Promise<boolean> {
  if (!supported() || Notification.permission === "denied" || saved() || localStorage.getItem(DECLINED)) {
    return false;
  }
  return (await pushState()) === "off";
}

export function notNow(): void {
  localStorage.setItem(DECLINED, "1");
}

/** From a tap only: asks the browser's permission, subscribes, and tells the API. */
export async function turnOn(): Promise<PushState> {
  // Asked first, while the tap still counts: browsers ignore or refuse a prompt without one.
  const permission = await Notification.requestPermission();
  if (permission === "denied") return "blocked";
  if (permission !== "granted") return "off"; // the prompt was dismissed
  const key = await serverKey();
  if (key === null) return "unconfigured";
  // `ready` would wait for ever if the worker was never registered (it failed to install).
  if (!(await navigator.serviceWorker.getRegistration())) {
    throw new Error("The app's service worker is not running: reload the app and try again.");
  }
  await subscribe(await navigator.serviceWorker.ready, key);
  localStorage.removeItem(DECLINED);
  return "on";
}

/** Turned off by the user: the API forgets this device first, then the browser does. */
export async function turnOff(): Promise<void> {
  const record = saved();
  if (record) await deletePushSubscription(record.id);
  await unsubscribe();
  localStorage.setItem(DECLINED, "1");
}

/** Before the API address or key changes: this device stops being told about the old
 * account's captures. The DELETE is best effort: if it cannot be made, dropping the browser's
 * subscription still ends it, as the push service then refuses the API's next push (410) and
 * the API removes it. Not turned on for the new account by itself: that is the user's call. */
export async function signOut(): Promise<boolean> {
  const record = saved();
  if (!record) return false;
  try {
    await deletePushSubscription(record.id);
  } catch {
    // See above: the unsubscribe below is enough.
  }
  await unsubscribe();
  return true;
}

/** On start (and when the browser renewed the subscription): a subscription made with a key
 * the API no longer has is made again, a renewed one is posted, and one whose permission was
 * taken back is forgotten. Posting again is idempotent. */
export async function keepCurrent(): Promise<void> {
  const record = saved();
  if (!record || !supported()) return;
  if (Notification.permission !== "granted" || record.apiBase !== loadSettings()?.apiBase) {
    await signOut();
    return;
  }
  const key = await serverKey();
  if (key !== null) await subscribe(await navigator.serviceWorker.ready, key);
}

async function subscribe(registration: ServiceWorkerRegistration, key: string): Promise<void> {
  const serverKeyBytes = fromBase64Url(key);
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameBytes(subscription.options.applicationServerKey, serverKeyBytes)) {
    // The API's key was rotated: a subscription made with the old one can never be sent to.
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: serverKeyBytes,
  });
  const before = saved();
  if (before && before.endpoint !== subscription.endpoint) {
    await deletePushSubscription(before.id).catch(() => undefined); // gone at the push service anyway
  }
  const posted = await postPushSubscription(subscription.toJSON());
  const record: Saved = { id: posted.id, endpoint: subscription.endpoint, apiBase: loadSettings()!.apiBase };
  localStorage.setItem(SAVED, JSON.stringify(record));
}

async function unsubscribe(): Promise<void> {
  localStorage.removeItem(SAVED);
  if (!supported()) return;
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = await registration?.pushManager.getSubscription();
  await subscription?.unsubscribe();
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function sameBytes(a: ArrayBuffer | null, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false;
  const view = new Uint8Array(a);
  return view.every((byte, i) => byte === b[i]);
}
