// The service worker: the app shell from the cache, so the app opens without a network, and
// the push notifications. Nothing else is touched: API and storage requests go to the network
// as if it were not here, so no capture, inbox or key is ever cached.
/// <reference lib="webworker" />
export {}; // a module, so that `self` below can be typed as the service worker's scope
declare const self: ServiceWorkerGlobalScope;
// Both filled in by web/build.mjs: the shell's files, and a hash of their contents.
declare const SHELL: string[];
declare const VERSION: string;

const CACHE = `shell-${VERSION}`;
const shellUrls = new Set(SHELL.map((path) => new URL(path, self.registration.scope).href));
const INDEX = new URL("index.html", self.registration.scope).href;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll([...shellUrls]))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  // A new build has a new cache: drop the old shells, and serve the open pages from this one.
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  url.search = "";
  url.hash = "";
  if (request.mode === "navigate" && url.href.startsWith(self.registration.scope) && !url.pathname.includes("/api/")) {
    event.respondWith(fromCache(INDEX, request));
  } else if (shellUrls.has(url.href)) {
    event.respondWith(fromCache(url.href, request));
  }
});

async function fromCache(key: string, request: Request): Promise<Response> {
  const cached = await caches.match(key, { cacheName: CACHE });
  return cached ?? fetch(request);
}

// Web Push (docs/contract.md): every push is shown, as the subscription promised
// (userVisibleOnly); one this worker cannot read still says something happened.
const ICON = new URL("icons/icon-192.png", self.registration.scope).href;

interface Payload {
  title?: unknown;
  body?: unknown;
  captureId?: unknown;
  tag?: unknown;
  url?: unknown;
}

self.addEventListener("push", (event) => {
  let payload: Payload = {};
  try {
    const parsed: unknown = event.data?.json();
    if (parsed && typeof parsed === "object") payload = parsed as Payload;
  } catch {
    // Not JSON: the generic notification below.
  }
  const title = text(payload.title);
  // A capture's id, or the day's digest: a newer notification of it replaces the older.
  const tag = text(payload.captureId) || text(payload.tag);
  event.waitUntil(
    self.registration.showNotification(title || "Second brain", {
      body: title ? text(payload.body) : "Something happened to one of your captures.",
      tag: tag || undefined,
      icon: ICON,
      data: { url: inApp(payload.url) },
    }),
  );
});

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

/** The payload's `/#/captures/<id>`, resolved against this app's scope (which may be a path
 * below the origin); anything that would leave the app opens its start instead. */
function inApp(url: unknown): string {
  const scope = self.registration.scope;
  const resolved = new URL(text(url).replace(/^\/+/, ""), scope).href;
  return resolved.startsWith(scope) ? resolved : scope;
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(open(inApp((event.notification.data as { url?: unknown } | null)?.url)));
});

/** An open window of the app is brought forward and shown the capture; else a new one. */
async function open(url: string): Promise<void> {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const app = windows.find((client) => client.url.startsWith(self.registration.scope));
  if (!app) {
    await self.clients.openWindow(url);
    return;
  }
  await app.focus();
  app.postMessage({ type: "open", url }); // main.ts routes it
}

// The browser renewed (or dropped) the subscription. Only the app holds the API's address and
// key (in its own storage), so this worker subscribes again if the browser did not, and has an
// open window post it; with none open, the app posts it when it next starts. Best effort.
interface SubscriptionChange extends ExtendableEvent {
  readonly oldSubscription?: PushSubscription | null;
  readonly newSubscription?: PushSubscription | null;
}

self.addEventListener("pushsubscriptionchange", (event) => {
  const change = event as SubscriptionChange;
  change.waitUntil(renew(change));
});

async function renew(change: SubscriptionChange): Promise<void> {
  const applicationServerKey = change.oldSubscription?.options.applicationServerKey;
  if (!change.newSubscription && applicationServerKey) {
    await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey }).catch(() => null);
  }
  for (const client of await self.clients.matchAll({ type: "window" })) {
    client.postMessage({ type: "pushsubscriptionchange" });
  }
}
