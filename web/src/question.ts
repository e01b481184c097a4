// A question a capture asks (an AG-UI interrupt), as the user answers it: the buckets it names
// as buttons, a box for words, Dismiss; for a voice note with nothing in it, Discard. The same
// on a capture's card and on its own page.
import type { Interrupt } from "@ag-ui/client";
import { h } from "./dom";
import type { ResumeResponse } from "./flows";
import { canRecord, Recording } from "./recorder";
import { characters, inWords } from "./words";

export interface Asking {
  /** Unique on the page: the ids of the question's controls are made from it. */
  key: string;
  interrupt: Interrupt;
  answer: (response: ResumeResponse) => void;
  /** A voice note in which nothing was said: nothing to file, so it may be thrown away. */
  discard?: () => void;
  /** A voice note's question may be answered by recording again: the words the API heard in
   * the recording (POST /api/captures/{id}/spoken-answer), sent as if typed. */
  hear?: (audio: Blob, contentType: string) => Promise<string>;
}

interface Field {
  name: string;
  choices?: string[];
  maxLength?: number;
}

/** The answer's fields, read from the interrupt's responseSchema (a JSON schema): its
 * properties, or those of each schema it allows (anyOf / oneOf: a bucket, or an answer). */
function fields(schema: unknown): Field[] {
  type Schema = { properties?: Record<string, unknown>; anyOf?: Schema[]; oneOf?: Schema[]; $defs?: Record<string, unknown> };
  const root = (schema ?? {}) as Schema;
  const resolve = (property: unknown) => {
    const resolved = property as { $ref?: string; enum?: string[]; maxLength?: number };
    const ref = resolved.$ref?.match(/^#\/\$defs\/(.+)$/);
    return (ref ? (root.$defs?.[ref[1]] ?? {}) : resolved) as typeof resolved;
  };
  // Each allowed schema may itself be a reference into $defs (pydantic writes them so).
  const all = [root, ...(root.anyOf ?? []), ...(root.oneOf ?? [])].map((one) => resolve(one) as Schema);
  return all.flatMap((one) =>
    Object.entries(one.properties ?? {}).map(([name, property]) => {
      const resolved = resolve(property);
      return { name, choices: resolved.enum, maxLength: resolved.maxLength };
    }),
  );
}

export function questionView({ key, interrupt, answer, discard, hear }: Asking): HTMLElement {
  const found = fields(interrupt.responseSchema);
  const picks = found.find((f) => f.choices);
  const typed = found.find((f) => !f.choices);
  const metadata = (interrupt.metadata ?? {}) as { bucket?: string; buckets?: string[] };
  // The buckets the question offers (metadata.buckets: the two it names, or all four), each one
  // the schema takes; without them, every bucket the schema takes.
  const offered = picks?.choices ? (metadata.buckets ?? picks.choices).filter((b) => picks.choices!.includes(b)) : [];
  const prompt = inWords(interrupt.message ?? "The capture needs your answer.");
  const promptId = `ask-${key}`;
  const dismiss = h(
    "button",
    { type: "button", class: "link", "data-focus": "dismiss", onclick: () => answer({ status: "cancelled" }) },
    "Dismiss",
  );
  const choice = (field: Field, value: string) =>
    h(
      "button",
      {
        type: "button",
        class: value === metadata.bucket ? "choice current" : "choice",
        "data-focus": `choice-${value}`,
        onclick: () => answer({ status: "resolved", payload: { [field.name]: value } }),
      },
      value === metadata.bucket ? `${value} ✓` : value,
    );
  const buttons: HTMLElement[] = picks ? offered.map((value) => choice(picks, value)) : [];
  if (discard) {
    buttons.push(h("button", { type: "button", class: "danger-outline", "data-focus": "discard", onclick: () => discard() }, "Discard"));
  }
  // Every question also takes a typed answer, sent as a misunderstood capture's is.
  const name = typed?.name ?? "answer";
  const input = h("input", {
    id: `answer-${key}`,
    name,
    type: "text",
    required: true,
    // No maxlength: a browser would cut a pasted answer without a word; a long one is said below.
    autocomplete: "off",
    "data-focus": "answer",
    "aria-describedby": `answer-${key}-limit`,
  });
  const limit = typed?.maxLength ?? 4000;
  const tooLong = h("p", { id: `answer-${key}-limit`, class: "note error", "aria-live": "polite", hidden: true });
  const label = picks && offered.length ? "Or say where it goes" : discard ? "Or type what you said" : prompt;
  const spoken = hear && canRecord() ? recordAnswer(hear, input, (text) => answer({ status: "resolved", payload: { [name]: text } })) : null;
  const form = h(
    "form",
    {},
    h("label", { for: input.id, class: label === prompt ? null : "or" }, label),
    input,
    tooLong,
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary" }, "Answer"), spoken?.button, dismiss),
    spoken?.note,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    const n = characters(value);
    tooLong.hidden = n <= limit;
    input.setAttribute("aria-invalid", String(n > limit));
    if (n > limit) {
      tooLong.textContent =
        `${n.toLocaleString("en")} characters: an answer holds up to ${limit.toLocaleString("en")}. ` +
        "Shorten it, or capture the rest on its own.";
      input.focus();
      return;
    }
    if (value) answer({ status: "resolved", payload: { [name]: value } });
  });
  if (buttons.length === 0) return h("div", { class: "ask" }, form);
  return h(
    "div",
    { class: "ask", role: "group", "aria-labelledby": promptId },
    h("p", { id: promptId, class: "prompt" }, prompt),
    h("div", { class: "choices" }, ...buttons),
    form,
  );
}

/** "Record answer": records until tapped again, then sends the words the API heard as the
 * answer (shown in the box first); nothing heard is said, and the box stays for typing. */
function recordAnswer(
  hear: (audio: Blob, contentType: string) => Promise<string>,
  input: HTMLInputElement,
  send: (text: string) => void,
): { button: HTMLButtonElement; note: HTMLElement } {
  const note = h("p", { class: "note", role: "status" });
  const button = h("button", { type: "button", class: "secondary", "data-focus": "record-answer" }, "Record answer");
  let recording: Recording | null = null;
  button.addEventListener("click", async () => {
    if (!recording) {
      try {
        recording = await Recording.start(
          (seconds) => (note.textContent = `Recording… ${Math.floor(seconds)} s`),
          () => button.click(),
        );
      } catch {
        note.textContent = "The microphone could not be opened.";
        return;
      }
      button.textContent = "Stop and answer";
      return;
    }
    const done = recording;
    recording = null;
    button.disabled = true;
    button.textContent = "Record answer";
    note.textContent = "Listening…";
    try {
      const recorded = await done.stop();
      const text = (await hear(recorded.audio, recorded.contentType)).trim();
      if (!text) {
        note.textContent = "Nothing was heard. Say it again, or type it.";
        return;
      }
      input.value = text;
      note.textContent = `Heard: “${text}”`;
      send(text);
    } catch (error) {
      note.textContent = error instanceof Error ? error.message : "The recording could not be heard.";
    } finally {
      button.disabled = false;
    }
  });
  return { button, note };
}
