// The app's shell: screens by URL fragment, the network badge, the wrong-key banner, the
// outbox sent on start and whenever the network comes back, the service worker and what it
// asks of the page (a tapped notification's capture, a renewed push subscription).
import { onKeyRefused } from "./api";
import { byId, h } from "./dom";
import { flushOutbox } from "./flows";
import { captureScreen } from "./screens/capture";
import { inboxScreen, itemScreen } from "./screens/inbox";
import { settingsScreen } from "./screens/settings";
import { todayScreen } from "./screens/today";
import { keepCurrent } from "./push";
import { loadSettings } from "./settings";
import * as store from "./store";

function route(): void {
  const [screen, id] = location.hash.replace(/^#\/?/, "").split("/");
  const main = byId("main");
  const firstRun = !loadSettings();
  const name = firstRun ? "settings" : screen || "capture";
  const view =
    name === "settings"
      ? settingsScreen(() => {
          byId("banner").hidden = true;
          flushOutbox();
          // Set up for the first time: straight on to capturing.
          if (firstRun) {
            history.replaceState(null, "", "#/capture");
            route();
          }
        })
      : (name === "captures" || name === "inbox") && id // #/captures/<id>: a notification's link
        ? itemScreen(decodeURIComponent(id))
        : name === "inbox"
          ? inboxScreen()
          : name === "today" // #/today: the digest push's link
            ? todayScreen()
            : captureScreen();
  main.replaceChildren(view);
  // Settings says it itself, next to the key: no banner pointing at the screen it is on.
  if (name === "settings") byId("banner").hidden = true;
  document.querySelectorAll<HTMLAnchorElement>(".tabs a").forEach((tab) => {
    const current =
      name === "captures" ? "inbox" : ["inbox", "settings", "today"].includes(name) ? name : "capture";
    if (tab.dataset.screen === current) {
      tab.setAttribute("aria-current", "page");
    } else tab.removeAttribute("aria-current");
  });
  // A screen reader starts reading the new screen, not the old position on the page.
  if (navigated) view.querySelector<HTMLElement>("h2[tabindex]")?.focus();
  navigated = true;
}
let navigated = false;

function showNetwork(): void {
  const waiting = store.all().filter((c) => c.phase === "waiting").length;
  const outbox = waiting ? `${waiting} waiting` : "";
  byId("network").textContent = navigator.onLine ? outbox : ["Offline", outbox].filter(Boolean).join(" · ");
  document.body.classList.toggle("offline", !navigator.onLine);
}

onKeyRefused(() => {
  if (byId("settings-title")) return;
  const banner = byId("banner");
  banner.replaceChildren(
    "The API refused your key. ",
    h("a", { href: "#/settings" }, "Check it in Settings"),
    ".",
  );
  banner.hidden = false;
});

window.addEventListener("hashchange", route);
window.addEventListener("online", () => {
  showNetwork();
  flushOutbox();
});
window.addEventListener("offline", showNetwork);
// Another tab of the app wrote the list: show its captures too.
window.addEventListener("storage", (event) => event.key === "capture.captures" && store.reload());
store.subscribe(showNetwork);

route();
showNetwork();
if (loadSettings()) flushOutbox();
performance.mark("app-ready");

if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("sw.js").then(
      () => void keepPushCurrent(),
      () => {
        // Without a service worker the app still works; it just does not open offline.
      },
    );
  });
  navigator.serviceWorker.addEventListener("message", (event) => {
    const message = event.data as { type?: string; url?: string } | null;
    if (message?.type === "open" && typeof message.url === "string") {
      const url = new URL(message.url);
      if (url.origin === location.origin) location.hash = url.hash;
    } else if (message?.type === "pushsubscriptionchange") {
      void keepPushCurrent();
    }
  });
}

async function keepPushCurrent(): Promise<void> {
  try {
    if (loadSettings()) await keepCurrent();
  } catch {
    // Offline or refused: the next start tries again.
  }
}
