// The service worker: the app shell from the cache, so the app opens without a network.
// Nothing else is touched: API and storage requests go to the network as if it were not here,
// so no capture, inbox or key is ever cached.
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
