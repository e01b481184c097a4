// The API's address and the user's key: typed in once, kept on this device (localStorage),
// never part of the bundle.

export interface Settings {
  apiBase: string; // ends in /api, no trailing slash
  apiKey: string;
}

const STORAGE_KEY = "capture.settings";

export function loadSettings(): Settings | null {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null");
    if (saved && typeof saved.apiBase === "string" && typeof saved.apiKey === "string") {
      return saved;
    }
  } catch {
    // Unreadable settings are as good as none: the settings screen asks again.
  }
  return null;
}

export function saveSettings(settings: Settings): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
}

/** The API base as the routes expect it: `https://host/api`. A bare origin gets the `/api`
 * routePrefix of host.json; anything else is kept as typed, without a trailing slash. */
export function normaliseBase(input: string): string {
  const url = new URL(input.trim());
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("The address must start with https:// (or http:// for a local API).");
  }
  let path = url.pathname.replace(/\/+$/, "");
  if (path === "") path = "/api";
  return `${url.origin}${path}`;
}
