// The app's shell: screens by URL fragment, the network badge, the wrong-key banner, the
// outbox sent on start and whenever the network comes back, the service worker and what it
// asks of the page (a tapped notification's capture, a renewed push subscription).
import { onKeyRefused } from "./api";
import { byId, h } from "./dom";
import { flushOutbox } from "./flows";
import { askScreen } from "./screens/ask";
import { captureScreen, prefill } from "./screens/capture";
import { inboxScreen, itemScreen, type Origin } from "./screens/inbox";
import { bucketOf, listScreen, personScreen } from "./screens/lists";
import { searchScreen } from "./screens/search";
import { settingsScreen } from "./screens/settings";
import { sharedText } from "./share";
import { todayScreen } from "./screens/today";
import { keepCurrent } from "./push";
import { loadSettings } from "./settings";
import * as store from "./store";

interface Screen {
  view: HTMLElement;
  tab: string; // the tab it belongs to
  title?: string; // what the bar says, when not the tab's name
  named?: string; // what a back link to it says, when not its title (a person's page)
  details?: boolean; // a capture's page
}

// The screen a capture's page was opened from, for its back link: kept for the tab's life, so
// that a reload of the page keeps it. A page opened first (a notification's link) goes back
// to the Inbox.
const ORIGIN = "app.origin";

function cameFrom(): (Origin & { tab: string }) | null {
  try {
    return JSON.parse(sessionStorage.getItem(ORIGIN) ?? "null") as (Origin & { tab: string }) | null;
  } catch {
    return null;
  }
}

/** The screen for an address: #/capture, #/lists/<bucket>, #/people/<name>, #/search?q=…,
 * #/ask?q=… (a conversation with your captures, under the Search tab),
 * #/inbox, #/captures/<id> (also a notification's link; #/inbox/<id> still works), #/today (the
 * digest push's link), #/settings. */
function screenFor(hash: string, firstRun: boolean): Screen {
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?");
  const [name, id] = path.split("/");
  if (firstRun || name === "settings") {
    const saved = () => {
      byId("banner").hidden = true;
      flushOutbox();
      // Set up for the first time: straight on to capturing.
      if (firstRun) {
        history.replaceState(null, "", "#/capture");
        route();
      }
    };
    return { view: settingsScreen(saved), tab: "settings" };
  }
  if ((name === "captures" || name === "inbox") && id) {
    // It belongs to the tab it was opened from.
    const from = cameFrom();
    return { view: itemScreen(decodeURIComponent(id), from ?? undefined), tab: from?.tab ?? "inbox", title: "Details", details: true };
  }
  if (name === "inbox") return { view: inboxScreen(), tab: "inbox" };
  if (name === "today") return { view: todayScreen(), tab: "today" }; // the digest push's link
  if (name === "lists") {
    const bucket = bucketOf(id);
    return { view: listScreen(bucket), tab: "lists", title: bucket };
  }
  if (name === "people" && id) {
    const person = decodeURIComponent(id);
    return { view: personScreen(person), tab: "lists", title: "People", named: person };
  }
  if (name === "search") return { view: searchScreen(new URLSearchParams(query).get("q") ?? ""), tab: "search" };
  if (name === "ask") return { view: askScreen(new URLSearchParams(query).get("q") ?? ""), tab: "search", title: "Ask" };
  return { view: captureScreen(), tab: "capture" };
}

function route(): void {
  const screen = screenFor(location.hash, !loadSettings());
  const { view, tab, title: named } = screen;
  const main = byId("main");
  main.replaceChildren(view);
  // The bar names the screen: the tab's name, the list's, or a capture's details.
  const title = named ?? tab[0].toUpperCase() + tab.slice(1);
  if (!screen.details && tab !== "settings") {
    sessionStorage.setItem(ORIGIN, JSON.stringify({ hash: location.hash || "#/capture", label: screen.named ?? title, tab }));
  }
  byId("screen-name").textContent = title;
  document.title = `${title} · Second brain`;
  // Settings says it itself, next to the key: no banner pointing at the screen it is on.
  if (tab === "settings") byId("banner").hidden = true;
  document.querySelectorAll<HTMLAnchorElement>(".tabs a").forEach((link) => {
    if (link.dataset.screen === tab) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
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

// Shared to the app (the share target's ./?title=…&text=…&url=…): the capture screen opens
// with it, and the address loses the query so that a reload does not share it again.
const shared = sharedText(location.search);
if (shared !== null) {
  prefill(shared);
  history.replaceState(null, "", `${location.pathname}#/capture`);
}
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
