// Settings: the API's address and the key, checked against the API when saved; whether this
// device gets notifications; the daily digest's time, zone and review day (the account's, on
// the API).
import { ApiError, call, checkConnection } from "../api";
import { h } from "../dom";
import { exportAll } from "../recall";
import { pushState, signOut, turnOff, turnOn, type PushState } from "../push";
import { loadSettings, normaliseBase, saveSettings } from "../settings";

const PUSH_STATES: Record<PushState, string> = {
  on: "On: this device is told how a capture turned out when you were not watching.",
  off: "Off.",
  blocked: "Blocked by the browser: allow notifications for this site in the browser's settings.",
  unsupported: "Not supported by this browser. On an iPhone, add the app to the Home Screen first.",
  unconfigured: "Not set up on this API (it has no push key).",
  unreachable: "Unknown: the API could not be reached.",
};

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
    const apiKey = key.value.trim();
    // Another address or key is another account: this device stops getting the old one's
    // notifications (the API is told with the old key, before it is replaced).
    const before = loadSettings();
    const other = before !== null && (before.apiBase !== apiBase || before.apiKey !== apiKey);
    const pushWasOn = other && (await signOut());
    saveSettings({ apiBase, apiKey });
    if (pushWasOn) {
      notify?.show("off", "Notifications were turned off: the address or key changed. Turn them on again for this account.");
    } else if (other) notify?.refresh(); // the new address may or may not have push
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
  const notify = saved ? notifications() : null;
  return h(
    "section",
    { class: "screen", "aria-labelledby": "settings-title" },
    h("h2", { id: "settings-title", class: "visually-hidden", tabindex: "-1" }, "Settings"),
    saved ? null : h("p", {}, "Tell the app where your captures go: your API's address and your key."),
    form,
    notify?.element,
    saved ? digestSettings() : null,
    saved ? recordingSettings() : null,
    saved ? exporter() : null,
  );
}

/** GET/PUT /api/preferences (docs/contract.md): a PUT sets them all. */
interface Preferences {
  timeZone: string;
  digestAt: string; // HH:MM, 24 h
  digest: boolean;
  weeklyReviewDay: string;
  reminders: boolean;
  keepAudio: boolean;
  audioRetentionDays: number | null; // null: for ever
  nextDigestAt: string | null;
  saved: boolean; // false: never set, the API's defaults
}

const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The daily digest: on or off, its local time and zone, the weekly review's day, and whether
 * the push names what is due. A user who never set them starts from this browser's zone. */
function digestSettings(): HTMLElement {
  const on = h("input", { id: "digest-on", type: "checkbox", role: "switch" });
  const at = h("input", { id: "digest-at", type: "time", required: true, "aria-describedby": "digest-at-hint" });
  const zones = h("datalist", { id: "time-zones" });
  const zone = h("input", {
    id: "time-zone",
    type: "text",
    list: "time-zones",
    required: true,
    autocomplete: "off",
    spellcheck: false,
    "aria-describedby": "time-zone-hint",
  });
  const day = h(
    "select",
    { id: "review-day" },
    ...WEEKDAYS.map((d) => h("option", { value: d }, d[0].toUpperCase() + d.slice(1))),
  );
  const reminders = h("input", { id: "digest-reminders", type: "checkbox" });
  const save = h("button", { type: "submit", class: "secondary", disabled: true }, "Save digest settings");
  const status = h("p", { class: "hint", id: "digest-status", role: "status" }, "Loading…");
  const fields = [on, at, zone, day, reminders];
  let read: Preferences | null = null;
  const show = (prefs: Preferences) => {
    read = prefs;
    on.checked = prefs.digest;
    at.value = prefs.digestAt;
    zone.value = prefs.saved ? prefs.timeZone : browserZone();
    day.value = prefs.weeklyReviewDay;
    reminders.checked = prefs.reminders;
  };
  const said = (prefs: Preferences) =>
    prefs.digest && prefs.nextDigestAt
      ? `On: next at ${new Date(prefs.nextDigestAt).toLocaleString([], { timeZone: prefs.timeZone, weekday: "short", hour: "2-digit", minute: "2-digit" })} (${prefs.timeZone}).`
      : prefs.saved
        ? "Off: no digest is sent."
        : "Not set up yet: the digest is off.";
  const wrong = (field: HTMLElement | null, message: string) => {
    for (const f of fields) f.removeAttribute("aria-invalid");
    status.className = "note error";
    status.textContent = message;
    if (field) {
      field.setAttribute("aria-invalid", "true");
      field.focus();
    }
  };
  call<Preferences>("GET", "/preferences").then(
    (prefs) => {
      show(prefs);
      status.textContent = said(prefs);
      save.disabled = false;
    },
    (error) =>
      wrong(
        null,
        error instanceof ApiError && error.status === 401
          ? "Save a key the API takes (above) to see the digest settings."
          : error instanceof Error
            ? error.message
            : "The digest settings could not be read.",
      ),
  );
  if (typeof Intl.supportedValuesOf === "function") {
    zones.replaceChildren(...Intl.supportedValuesOf("timeZone").map((z) => h("option", { value: z })));
  }
  const form = h(
    "form",
    { class: "settings digest", "aria-labelledby": "digest-title", novalidate: true },
    h("h3", { id: "digest-title" }, "Daily digest"),
    h("div", { class: "switch" }, on, h("label", { for: "digest-on" }, "Send me the digest every morning")),
    h("div", { class: "field" }, h("label", { for: "digest-at" }, "Time"), at, h("p", { class: "hint", id: "digest-at-hint" }, "Your local time, in the zone below.")),
    h(
      "div",
      { class: "field" },
      h("label", { for: "time-zone" }, "Time zone"),
      zone,
      zones,
      h("p", { class: "hint", id: "time-zone-hint" }, `A place name, such as Europe/London. This device is in ${browserZone()}.`),
    ),
    h("div", { class: "field" }, h("label", { for: "review-day" }, "Weekly review on"), day),
    h("div", { class: "switch field" }, reminders, h("label", { for: "digest-reminders" }, "Name what is due today in the notification")),
    save,
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const timeZone = zone.value.trim();
    if (!/^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(at.value)) return wrong(at, "Choose the time of day for the digest, such as 07:30.");
    if (!timeZone) return wrong(zone, "Choose a time zone, such as Europe/London.");
    for (const f of fields) f.removeAttribute("aria-invalid");
    save.disabled = true;
    status.className = "hint";
    status.textContent = "Saving…";
    try {
      // A PUT sets every preference: the recordings' ones go back as they were read.
      const kept = read ? { keepAudio: read.keepAudio, audioRetentionDays: read.audioRetentionDays } : {};
      const body = { timeZone, digestAt: at.value, digest: on.checked, weeklyReviewDay: day.value, reminders: reminders.checked, ...kept };
      const prefs = await call<Preferences>("PUT", "/preferences", body);
      show(prefs);
      status.textContent = `Saved. ${said(prefs)}`;
    } catch (error) {
      if (error instanceof ApiError && error.code === "UNKNOWN_TIME_ZONE") {
        wrong(zone, `${timeZone} is not a time zone this service knows. Pick one from the list, such as Europe/London.`);
      } else wrong(null, error instanceof Error ? error.message : "The digest settings could not be saved.");
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

const RETENTIONS: [string, string][] = [
  ["30", "30 days"],
  ["90", "90 days"],
  ["365", "A year"],
  ["730", "Two years"],
  ["forever", "For ever"],
];

/** Voice notes' recordings: kept beside their words or not, and for how long. A PUT sets every
 * preference, so the others are read first and sent back as they are. */
function recordingSettings(): HTMLElement {
  const keep = h("input", { id: "keep-audio", type: "checkbox", role: "switch" });
  const days = h("select", { id: "audio-retention" }, ...RETENTIONS.map(([value, label]) => h("option", { value }, label)));
  const save = h("button", { type: "submit", class: "secondary", disabled: true }, "Save recording settings");
  const status = h("p", { class: "hint", role: "status" }, "Loading…");
  const show = (prefs: Preferences) => {
    keep.checked = prefs.keepAudio;
    const value = prefs.audioRetentionDays === null ? "forever" : String(prefs.audioRetentionDays);
    if (![...days.options].some((o) => o.value === value)) days.append(h("option", { value }, `${value} days`));
    days.value = value;
    days.disabled = !keep.checked;
  };
  keep.addEventListener("change", () => (days.disabled = !keep.checked));
  const said = (prefs: Preferences) =>
    !prefs.keepAudio
      ? "Recordings are deleted once transcribed."
      : prefs.audioRetentionDays === null
        ? "Recordings are kept for ever."
        : `Recordings are kept ${prefs.audioRetentionDays} days.`;
  call<Preferences>("GET", "/preferences").then(
    (prefs) => {
      show(prefs);
      status.textContent = said(prefs);
      save.disabled = false;
    },
    (error) => (status.textContent = error instanceof Error ? error.message : "The settings could not be read."),
  );
  const form = h(
    "form",
    { class: "settings recordings", "aria-labelledby": "recordings-title", novalidate: true },
    h("h3", { id: "recordings-title" }, "Voice recordings"),
    h("div", { class: "switch" }, keep, h("label", { for: "keep-audio" }, "Keep each recording beside its words")),
    h("div", { class: "field" }, h("label", { for: "audio-retention" }, "Keep them for"), days),
    save,
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    status.textContent = "Saving…";
    try {
      const prefs = await call<Preferences>("GET", "/preferences");
      const { timeZone, digestAt, digest, weeklyReviewDay, reminders } = prefs;
      const audioRetentionDays = days.value === "forever" ? null : Number(days.value);
      const body = { timeZone, digestAt, digest, weeklyReviewDay, reminders, keepAudio: keep.checked, audioRetentionDays };
      const stored = await call<Preferences>("PUT", "/preferences", body);
      show(stored);
      status.textContent = `Saved. ${said(stored)}`;
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : "The settings could not be saved.";
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

/** Export: the whole second brain as a zip of Markdown (an Obsidian vault) and the inbox. */
function exporter(): HTMLElement {
  const status = h("p", { class: "hint", id: "export-status", role: "status" }, "A zip: a Markdown file per filed item, in a folder per bucket, and every capture in captures.jsonl.");
  const button = h("button", { type: "button", class: "secondary", "aria-describedby": "export-status" }, "Download everything");
  const audio = h("input", { id: "export-audio", type: "checkbox" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = "Preparing the export…";
    try {
      const { blob, filename } = await exportAll(audio.checked);
      const link = h("a", { href: URL.createObjectURL(blob), download: filename, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      status.textContent = `Downloaded ${filename} (${Math.max(1, Math.round(blob.size / 1024))} KB).`;
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : "The export failed.";
    } finally {
      button.disabled = false;
    }
  });
  return h(
    "div",
    { class: "settings export" },
    h("h3", {}, "Your data"),
    h("div", { class: "switch field" }, audio, h("label", { for: "export-audio" }, "With the voice recordings, each beside its note")),
    button,
    status,
  );
}

/** The notifications switch, with its state in words. */
function notifications(): {
  element: HTMLElement;
  show: (state: PushState, note?: string) => void;
  refresh: () => void;
} {
  const toggle = h("input", {
    id: "notify",
    type: "checkbox",
    role: "switch",
    disabled: true,
    "aria-describedby": "notify-status",
  });
  const status = h("p", { class: "hint", id: "notify-status", role: "status" }, "Checking…");
  const show = (state: PushState, note?: string) => {
    toggle.checked = state === "on";
    toggle.disabled = state !== "on" && state !== "off";
    status.textContent = note ?? PUSH_STATES[state];
  };
  toggle.addEventListener("change", async () => {
    toggle.disabled = true;
    try {
      if (toggle.checked) show(await turnOn());
      else {
        await turnOff();
        show("off");
      }
    } catch (error) {
      show(await pushState(), error instanceof Error ? error.message : "Something went wrong.");
    }
  });
  const refresh = () => void pushState().then((state) => show(state));
  refresh();
  const element = h(
    "div",
    { class: "settings notify" },
    h("div", { class: "switch" }, toggle, h("label", { for: "notify" }, "Notifications")),
    status,
  );
  return { element, show, refresh };
}
