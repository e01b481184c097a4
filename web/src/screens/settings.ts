// Settings: the API's address and the key, checked against the API when saved.
import { ApiError, checkConnection } from "../api";
import { h } from "../dom";
import { loadSettings, normaliseBase, saveSettings } from "../settings";

export function settingsScreen(onSaved: () => void): HTMLElement {
  const saved = loadSettings();
  const base = h("input", {
    id: "api-base",
    name: "apiBase",
    type: "url",
    inputmode: "url",
    autocomplete: "url",
    required: true,
    spellcheck: false,
    placeholder: "https://your-app.azurewebsites.net/api",
    "aria-describedby": "api-base-hint",
    value: saved?.apiBase ?? "",
  });
  const key = h("input", {
    id: "api-key",
    name: "apiKey",
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: false,
    "aria-describedby": "api-key-hint",
    value: saved?.apiKey ?? "",
  });
  const status = h("p", { class: "note", id: "settings-status", role: "status" });
  const form = h(
    "form",
    { class: "settings", "aria-labelledby": "settings-title" },
    h("label", { for: "api-base" }, "API address"),
    base,
    h("p", { class: "hint", id: "api-base-hint" }, "The address of your capture API, ending in /api."),
    h("label", { for: "api-key" }, "API key"),
    key,
    h("p", { class: "hint", id: "api-key-hint" }, "Kept on this device only."),
    h("button", { type: "submit", class: "primary" }, "Save and check"),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let apiBase: string;
    try {
      apiBase = normaliseBase(base.value);
    } catch (error) {
      status.textContent = error instanceof TypeError && error.message.startsWith("The address")
        ? error.message
        : "That is not a web address: it starts with https://.";
      return base.focus();
    }
    saveSettings({ apiBase, apiKey: key.value.trim() });
    status.className = "note";
    status.textContent = "Checking…";
    try {
      await checkConnection();
      status.textContent = `Connected to ${new URL(apiBase).host}.`;
      onSaved();
    } catch (error) {
      status.className = "note error";
      status.textContent =
        error instanceof ApiError && error.status === 401
          ? "The API refused this key (401). Check the key and save again."
          : error instanceof ApiError
            ? error.message
            : `Could not reach ${apiBase}. Check the address, and that the API allows this app's origin (CORS).`;
    }
  });
  return h(
    "section",
    { class: "screen", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title", tabindex: "-1" }, "Settings"),
    saved ? null : h("p", {}, "Tell the app where your captures go: your API's address and your key."),
    form,
  );
}
