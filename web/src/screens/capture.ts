// The capture screen: type or record, then watch each capture go from the outbox to its
// outcome, answering the questions some of them ask. A capture that will settle later is
// where notifications are first offered.
import type { Interrupt } from "@ag-ui/client";
import { deleteCapture, spokenAnswer } from "../api";
import { bucketBadge, h, when } from "../dom";
import { answer, captureText, captureVoice, send } from "../flows";
import { canRecord, clock, Recording, VOICE_LIMIT_S } from "../recorder";
import { mayOffer, notNow, turnOn } from "../push";
import * as store from "../store";
import type { LocalCapture, Phase } from "../store";
import { catchUp } from "../sync";
import { characters } from "../words";
import { questionView } from "../question";
import { repeats } from "../words";

const PHASES: Record<Phase, string> = {
  waiting: "Waiting to send",
  sending: "Sending",
  filed: "Filed",
  asking: "Needs an answer",
  kept: "In your inbox",
  failed: "Failed",
};

const STEPS: Record<string, [string, string]> = {
  Upload: ["Uploading", "Uploaded"],
  Transcription: ["Transcribing", "Transcribed"],
  Classifier: ["Classifying", "Classified"],
};

let list: HTMLOListElement | null = null;
// Whether to offer notifications (known once the API said it has push), and what the answer
// to the offer turned out to be, shown on the card it was made on.
let offering = false;
let offerAnswer: { id: string; note: string } | null = null;

store.subscribe((id) => {
  if (!list?.isConnected) return;
  if (id === null) return renderList();
  const capture = store.get(id);
  if (capture) renderCard(capture);
});

let shared: string | null = null;

/** Text shared to the app (the share target): the composer opens with it, to check and send. */
export function prefill(text: string): void {
  shared = text;
}

export function captureScreen(): HTMLElement {
  list = h("ol", { class: "cards", "aria-live": "polite", "aria-label": "Captures on this device" });
  renderList();
  // What the inbox moved or deleted meanwhile (here or on another device) shows here too.
  void catchUp();
  void mayOffer().then((yes) => {
    if (yes !== offering) {
      offering = yes;
      renderList();
    }
  });
  return h(
    "section",
    { class: "screen", "aria-labelledby": "capture-title" },
    h("h2", { id: "capture-title", class: "visually-hidden", tabindex: "-1" }, "New capture"),
    composer(),
    h("h2", { class: "section-title" }, "On this device"),
    list,
  );
}

function composer(): HTMLElement {
  const text = h("textarea", {
    id: "capture-text",
    name: "text",
    rows: shared ? Math.min(8, shared.split("\n").length + 3) : 3,
    // No maxlength: a browser would cut a long paste without a word. The count below says
    // when a capture is over the limit, and Send keeps it until it fits.
    required: true,
    "aria-describedby": "capture-count",
    placeholder: "Call Sarah about the budget review",
    value: shared ?? "",
  });
  const sharedNote = shared ? h("p", { class: "hint", id: "shared-note" }, "Shared from another app: check it, then Send.") : null;
  const count = h("p", { class: "hint", id: "capture-count", "aria-live": "polite", hidden: true });
  const counted = () => {
    const over = showCount(count, characters(text.value));
    text.setAttribute("aria-invalid", String(over));
    return over;
  };
  text.addEventListener("input", counted);
  shared = null;
  const recorderPanel = h("div", { class: "recording", hidden: true });
  const recordButton = h("button", { type: "button", class: "secondary", id: "record" }, "Record voice");
  const form = h(
    "form",
    { class: "composer", "aria-label": "New capture" },
    h("label", { for: "capture-text" }, "What's on your mind?"),
    sharedNote,
    text,
    count,
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary" }, "Send"),
      canRecord() ? recordButton : null,
    ),
    recorderPanel,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return text.focus();
    if (counted()) return text.focus(); // over the limit: kept here, to shorten or split
    captureText(value);
    text.value = "";
    counted();
  });
  if (text.value) counted();
  recordButton.addEventListener("click", () => startRecording(recordButton, recorderPanel));
  return form;
}

/** The API's MAX_CAPTURE_CHARS (docs/contract.md): a capture is kept whole up to this many
 * characters, counted as the API counts them (code points, so an emoji is one). */
export const CAPTURE_LIMIT = 100_000;
// Below this the count stays out of the way.
const COUNT_FROM = 1_000;

/** The count under the text once it is long, and what to do when it is over the limit;
 * whether it is over. */
function showCount(count: HTMLElement, n: number): boolean {
  const over = n > CAPTURE_LIMIT;
  count.hidden = n < COUNT_FROM;
  count.className = over ? "note error" : "hint";
  count.textContent = over
    ? `${n.toLocaleString("en")} characters: a capture holds up to ${CAPTURE_LIMIT.toLocaleString("en")}. ` +
      "Shorten it, or send it in parts."
    : `${n.toLocaleString("en")} of ${CAPTURE_LIMIT.toLocaleString("en")} characters`;
  return over;
}

async function startRecording(button: HTMLButtonElement, panel: HTMLElement): Promise<void> {
  const elapsed = h("span", { role: "timer", class: "elapsed" }, "0:00");
  const meter = h("progress", { max: VOICE_LIMIT_S, value: 0, "aria-label": "Recording length" });
  const stop = h("button", { type: "button", class: "primary" }, "Stop and send");
  const cancel = h("button", { type: "button", class: "link" }, "Cancel");
  let recording: Recording;
  let finished = false;
  const finish = async (keep: boolean) => {
    if (finished) return; // Stop, the limit and leaving the screen may all come at once
    finished = true;
    window.removeEventListener("hashchange", leave);
    panel.hidden = true;
    button.hidden = false;
    if (!keep) return recording.cancel();
    const recorded = await recording.stop();
    await captureVoice(recorded.audio, recorded.contentType, recorded.seconds);
    if (button.isConnected) button.focus();
  };
  // Leaving the screen mid-recording keeps what was said: it is sent like a Stop.
  const leave = () => void finish(true);
  try {
    recording = await Recording.start(
      (seconds) => {
        elapsed.textContent = clock(seconds);
        meter.value = seconds;
      },
      () => void finish(true),
    );
  } catch {
    panel.replaceChildren(h("p", { class: "note" }, "The microphone is not available: allow it for this site, then try again."));
    panel.hidden = false;
    return;
  }
  window.addEventListener("hashchange", leave);
  stop.addEventListener("click", () => void finish(true), { once: true });
  cancel.addEventListener("click", () => void finish(false), { once: true });
  panel.replaceChildren(
    h(
      "p",
      { class: "live" },
      h("span", { class: "dot", "aria-hidden": "true" }),
      "Recording ",
      elapsed,
      h("span", { class: "limit" }, ` of ${clock(VOICE_LIMIT_S)} max`),
    ),
    meter,
    h("div", { class: "row" }, stop, cancel),
  );
  panel.hidden = false;
  button.hidden = true;
  stop.focus();
}

function renderList(): void {
  if (!list) return;
  const captures = store.all();
  list.replaceChildren(...captures.map(card));
  if (captures.length === 0) {
    list.replaceChildren(h("li", { class: "empty" }, "Nothing captured on this device yet."));
  }
}

function renderCard(capture: LocalCapture): void {
  const old = list?.querySelector<HTMLElement>(`[data-id="${capture.id}"]`);
  if (!old) return renderList();
  // Keep the keyboard where it was: a re-rendered card gets its focused control back.
  const focused = old.contains(document.activeElement) ? document.activeElement?.getAttribute("data-focus") : null;
  const fresh = card(capture);
  old.replaceWith(fresh);
  if (focused) fresh.querySelector<HTMLElement>(`[data-focus="${focused}"]`)?.focus();
  if (capture.phase === "filed" || capture.phase === "asking" || capture.phase === "kept") {
    // For the benchmark (and any real-user timing): when the first outcome reached the screen.
    if (performance.getEntriesByName("outcome-shown").length === 0) performance.mark("outcome-shown");
  }
}

function card(c: LocalCapture): HTMLLIElement {
  const said = c.kind === "voice" ? voiceLine(c) : c.text;
  const offline = c.phase === "waiting" && !navigator.onLine;
  const note = c.note ?? (offline ? "Sends by itself when the network is back." : null);
  return h(
    "li",
    { class: `card ${c.phase}`, "data-id": c.id },
    h(
      "p",
      { class: "state" },
      h("span", { class: `badge ${c.phase}` }, PHASES[c.phase]),
      h("time", { datetime: new Date(c.createdAt).toISOString() }, when(c.createdAt)),
    ),
    h("p", { class: "what" }, opens(c) ? h("a", { href: `#/captures/${c.captureId}` }, said) : said),
    outcome(c),
    c.phase === "sending" && c.steps.length > 0 ? steps(c) : null,
    c.phase === "asking" && c.interrupt ? question(c, c.interrupt) : null,
    note ? h("p", { class: "note" }, note) : null,
    offering && c === store.all().find(settlesLater) ? offer(c) : null,
    offerAnswer?.id === c.id
      ? h("p", { class: "note", role: "status", tabindex: "-1", "data-focus": "offer-answer" }, offerAnswer.note)
      : null,
    c.phase === "failed" || (c.phase === "waiting" && navigator.onLine)
      ? h(
          "div",
          { class: "row" },
          h(
            "button",
            { type: "button", class: "secondary", "data-focus": "retry", onclick: () => void send(c.id) },
            c.phase === "failed" ? "Retry" : "Send now",
          ),
        )
      : null,
  );
}

/** Not settling while the user watches: in the outbox, left to the API's worker, or a voice
 * note still being transcribed. */
function settlesLater(c: LocalCapture): boolean {
  const transcribing = c.steps.some((s) => s.name === "Transcription" && !s.done);
  return c.phase === "waiting" || (c.phase === "sending" && (c.queued === true || transcribing));
}

/** The offer to notify, never on first load: only with a capture that may settle after the
 * user has left. The browser's permission is asked only from the tap on Turn on. */
function offer(c: LocalCapture): HTMLElement {
  const answered = (note: string) => {
    offering = false;
    offerAnswer = { id: c.id, note };
    renderList();
    // The buttons are gone: the keyboard goes to what came of them.
    list?.querySelector<HTMLElement>('[data-focus="offer-answer"]')?.focus();
  };
  const on = async () => {
    try {
      const state = await turnOn();
      answered(
        state === "on"
          ? "Notifications are on. You can turn them off in Settings."
          : state === "blocked"
            ? "Notifications are blocked for this site in the browser's settings."
            : state === "unconfigured"
              ? "This API has no notifications set up."
              : "Notifications stay off. You can turn them on in Settings.",
      );
    } catch (error) {
      answered(`Notifications could not be turned on: ${error instanceof Error ? error.message : "unknown error"}`);
    }
  };
  return h(
    "div",
    { class: "offer", role: "group", "aria-labelledby": `offer-${c.id}` },
    h("p", { id: `offer-${c.id}` }, "Get a notification when it's filed?"),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "secondary", "data-focus": "notify", onclick: () => void on() }, "Turn on"),
      h(
        "button",
        {
          type: "button",
          class: "link",
          "data-focus": "not-now",
          onclick: () => {
            notNow();
            answered("Not now. You can turn notifications on in Settings.");
          },
        },
        "Not now",
      ),
    ),
  );
}

/** A card opens its capture once the API has it and it has settled. */
function opens(c: LocalCapture): boolean {
  return Boolean(c.captureId) && (c.phase === "filed" || c.phase === "kept" || c.phase === "asking");
}

function voiceLine(c: LocalCapture): string {
  const length = c.seconds ? ` · ${clock(c.seconds)}` : "";
  return c.text ? `“${c.text}” (voice${length})` : `Voice note${length}`;
}

function outcome(c: LocalCapture): HTMLElement | null {
  // While asking, the question itself says where the capture is for now.
  if (!c.bucket || !(c.phase === "filed" || c.phase === "kept")) return null;
  const forNow = c.provisional ? " for now" : "";
  // The card already shows what was said: a title that only repeats it is left out.
  const title = c.title && !repeats(c.title, c.text) ? ` · ${c.title}` : "";
  return h("p", { class: "outcome" }, "Filed → ", bucketBadge(c.bucket), `${forNow}${title}`);
}

function steps(c: LocalCapture): HTMLElement {
  return h(
    "ol",
    { class: "steps", "aria-label": "Progress" },
    ...c.steps.map((s) => {
      const [doing, done] = STEPS[s.name] ?? [s.name, s.name];
      return h("li", { class: s.done ? "done" : "doing" }, s.done ? `✓ ${done}` : `${doing}…`);
    }),
  );
}

/** The open question on its card. A voice note in which nothing was said has nothing to file:
 * it may be discarded (deleted from the API too) instead. */
function question(c: LocalCapture, interrupt: Interrupt): HTMLElement {
  const silent = c.kind === "voice" && !c.text && Boolean(c.captureId);
  return questionView({
    key: c.id,
    interrupt,
    answer: (response) => void answer(c.id, response),
    discard: silent ? () => void discard(c) : undefined,
    hear:
      c.kind === "voice" && c.captureId
        ? (audio, type) => spokenAnswer(c.captureId!, audio, type).then((heard) => heard.text)
        : undefined,
  });
}

async function discard(c: LocalCapture): Promise<void> {
  store.update(c.id, { note: "Discarding…" });
  try {
    await deleteCapture(c.captureId!);
    store.remove(c.id);
  } catch (error) {
    store.update(c.id, { note: error instanceof Error ? error.message : "It could not be discarded." });
  }
}
