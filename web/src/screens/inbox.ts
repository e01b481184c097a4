// The inbox: every capture of the user, newest first, a page at a time; one capture opened,
// moved to another bucket (the one-tap fix) or deleted.
import type { Interrupt } from "@ag-ui/client";
import { BUCKETS, deleteCapture, getCapture, getInbox, pickBucket, spokenAnswer, type Bucket, type InboxItem } from "../api";
import { bucketBadge, h, when } from "../dom";
import { describeEnd, openQuestion, resumeThread, type ResumeResponse } from "../flows";
import { questionView } from "../question";
import { findFiled, type FiledView } from "../recall";
import { apply, forget } from "../sync";
import { sureness } from "../words";
import { recordingPanel } from "./recording";

const STATUSES: Record<string, string> = {
  filed: "Filed",
  needs_review: "Bucket to confirm",
  needs_clarification: "Needs an answer",
  unresolved: "Unclear",
  received: "Filing…",
  queued: "Filing…",
  awaiting_upload: "Waiting for audio",
  transcribing: "Transcribing…",
  failed: "Failed",
};

/** An inbox status in words ("Bucket to confirm", "Needs an answer"). */
export function statusOf(item: Pick<InboxItem, "status">): string {
  return STATUSES[item.status] ?? item.status;
}

function titleOf(item: InboxItem): string {
  // A capture the classifier did not understand has no title worth showing: its words are.
  const title = item.status === "needs_clarification" ? null : item.title;
  return title || item.text || (item.source === "voice" ? "Voice note" : "Capture");
}

function failure(error: unknown): string {
  return error instanceof Error ? error.message : "Something went wrong.";
}

export function inboxScreen(): HTMLElement {
  const items = h("ul", { class: "inbox", "aria-label": "Captures, newest first" });
  const status = h("p", { class: "note", role: "status" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  let token: string | null = null;

  const load = async (reset: boolean) => {
    status.textContent = "Loading…";
    more.disabled = true;
    try {
      const page = await getInbox(reset ? null : token);
      if (reset) items.replaceChildren();
      items.append(...page.items.map(row));
      token = page.continuationToken;
      status.textContent = items.children.length === 0 ? "Your inbox is empty." : "";
      more.hidden = !token;
    } catch (error) {
      status.textContent = failure(error);
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void load(false));
  void load(true);

  return h(
    "section",
    { class: "screen", "aria-labelledby": "inbox-title" },
    h(
      "div",
      { class: "title-row" },
      // The bar says Inbox already: the heading is for screen readers to land on.
      h("h2", { id: "inbox-title", class: "visually-hidden", tabindex: "-1" }, "Inbox"),
      h("button", { type: "button", class: "link", onclick: () => void load(true) }, "Refresh"),
    ),
    items,
    status,
    more,
  );
}

function row(item: InboxItem): HTMLLIElement {
  return h(
    "li",
    {},
    h(
      "a",
      { href: `#/captures/${item.id}`, class: "item" },
      h("span", { class: "title" }, titleOf(item)),
      h(
        "span",
        { class: "meta" },
        item.filedBucket ? bucketBadge(item.filedBucket) : null,
        h("span", {}, statusOf(item)),
        h("span", {}, when(item.createdAt)),
      ),
    ),
  );
}

/** Where a capture's page was opened from: its back link goes there, and says so. */
export interface Origin {
  hash: string;
  label: string;
}

const INBOX: Origin = { hash: "#/inbox", label: "Inbox" };

export function itemScreen(id: string, from: Origin = INBOX): HTMLElement {
  const body = h("div", { class: "detail" }, h("p", { class: "note" }, "Loading…"));
  const section = h(
    "section",
    { class: "screen", "aria-labelledby": "item-title" },
    h("a", { href: from.hash, class: "back" }, `← ${from.label}`),
    h("h2", { id: "item-title", tabindex: "-1" }, "Capture"),
    body,
  );
  getCapture(id).then(
    (item) => show(section, body, item, from),
    (error) => body.replaceChildren(h("p", { class: "note", role: "alert" }, failure(error))),
  );
  return section;
}

/** The question the capture asks, if one is open (from its inbox item). */
function asks(item: InboxItem): boolean {
  const open = item.interrupts?.some((i) => i.status === "open");
  return Boolean(open) && (item.status === "needs_clarification" || item.status === "needs_review");
}

/** A day as a person reads it: "Fri 28 Nov 2026". */
function day(date: string): string {
  const [y, m, d] = date.split("-").map(Number);
  return new Date(y, m - 1, d).toLocaleDateString([], { weekday: "short", day: "numeric", month: "short", year: "numeric" });
}

/** What the filed item holds that a person acts on: the inbox item's copy of it, or (from an
 * API whose inbox items do not carry it) the filed item itself. */
async function detailsOf(item: InboxItem): Promise<Pick<FiledView, "dueDate" | "people" | "nextAction"> | null> {
  if (item.nextAction !== undefined || !item.filedBucket) {
    return { dueDate: item.dueDate ?? null, people: item.people ?? [], nextAction: item.nextAction ?? null };
  }
  const filed = await findFiled(item.filedBucket, item.id).catch(() => null);
  return filed ?? { dueDate: item.dueDate ?? null, people: item.people ?? [], nextAction: null };
}

function show(section: HTMLElement, body: HTMLElement, item: InboxItem, from: Origin): void {
  section.querySelector("h2")!.textContent = titleOf(item);
  const status = h("p", { class: "note", role: "status" });
  const facts: [string, string | Node][] = [
    ["Status", statusOf(item)],
    ["Bucket", item.filedBucket ? bucketBadge(item.filedBucket) : "none yet"],
    ["Source", item.source === "voice" ? "Voice note" : "Text"],
    ["Captured", new Date(item.createdAt).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })],
  ];
  if (item.confidence !== null && item.chosenBy !== "user") {
    const words = sureness(item.confidence);
    facts.splice(2, 0, ["Confidence", words[0].toUpperCase() + words.slice(1)]);
  }
  if (item.chosenBy === "user") facts.splice(2, 0, ["Chosen by", "you"]);
  const factList = h("dl", { class: "facts" });
  const showFacts = (extra: [string, string | Node][]) => {
    // The details a person acts on come right after where it is filed.
    const all = [...facts.slice(0, 2), ...extra, ...facts.slice(2)];
    factList.replaceChildren(...all.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
  };
  showFacts([]);
  void detailsOf(item).then((details) => {
    if (!details || !factList.isConnected) return;
    const extra: [string, string | Node][] = [];
    if (details.dueDate) extra.push(["Due", h("time", { datetime: details.dueDate }, day(details.dueDate))]);
    if (details.nextAction) extra.push(["Next action", details.nextAction]);
    if (details.people?.length) {
      const links = details.people.flatMap((name, n) => [
        n ? ", " : "",
        h("a", { href: `#/people/${encodeURIComponent(name)}` }, name),
      ]);
      extra.push(["People", h("span", {}, ...links)]);
    }
    showFacts(extra);
  });

  const reshow = (fresh: InboxItem, said: string) => {
    apply(fresh); // the Capture screen's card of it moves too
    show(section, body, fresh, from);
    body.querySelector<HTMLElement>("[role=status]")!.textContent = said;
  };
  const move = async (bucket: Bucket) => {
    status.textContent = `Moving to ${bucket}…`;
    try {
      reshow(await pickBucket(item.id, bucket), `Moved to ${bucket}.`);
    } catch (error) {
      status.textContent = failure(error);
    }
  };
  const confirm = h(
    "div",
    { class: "confirm", hidden: true, role: "group", "aria-label": "Confirm delete" },
    h("p", {}, "Delete this capture everywhere? This cannot be undone."),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "danger", onclick: () => void remove() }, "Delete for good"),
      h("button", { type: "button", class: "secondary", onclick: () => toggle(false) }, "Keep it"),
    ),
  );
  const deleteButton = h("button", { type: "button", class: "danger-outline", onclick: () => toggle(true) }, "Delete");
  const toggle = (open: boolean) => {
    confirm.hidden = !open;
    deleteButton.hidden = open;
    (open ? confirm.querySelector("button") : deleteButton)?.focus();
  };
  const remove = async () => {
    status.textContent = "Deleting…";
    try {
      await deleteCapture(item.id);
      forget(item.id);
      location.hash = from.hash;
    } catch (error) {
      status.textContent = failure(error);
    }
  };

  // The open question, answered here as on the capture's card: an AG-UI resume on its thread.
  const asking = asks(item);
  const question = asking ? h("div", { class: "question" }, h("p", { class: "note" }, "Loading the question…")) : null;
  if (question) void ask(question, item, reshow, () => void remove());

  const hasText = Boolean(item.text);
  const parts = [
    item.text ? h("p", { class: "said" }, item.text) : null,
    recordingPanel(item, reshow),
    ...(item.clarifications ?? []).map((c) => h("p", { class: "said answer" }, `You answered: ${c.text}`)),
    question,
    factList,
    hasText && !asking
      ? h(
          "div",
          { class: "move", role: "group", "aria-labelledby": "move-title" },
          h("h3", { id: "move-title" }, item.filedBucket ? "Move to" : "File under"),
          h(
            "div",
            { class: "choices" },
            ...BUCKETS.filter((b) => b !== item.filedBucket).map((bucket) =>
              h("button", { type: "button", class: "choice", onclick: () => void move(bucket) }, bucket),
            ),
          ),
        )
      : null,
    h("div", { class: "row end" }, deleteButton),
    confirm,
    status,
  ];
  body.replaceChildren(...parts.filter((part) => part !== null));
}

/** Fills `place` with the capture's open question, and answers it from there. */
async function ask(
  place: HTMLElement,
  item: InboxItem,
  reshow: (fresh: InboxItem, said: string) => void,
  discard: () => void,
): Promise<void> {
  let interrupt: Interrupt | null;
  try {
    interrupt = await openQuestion(item.id, item.threadId ?? "");
  } catch (error) {
    place.replaceChildren(h("p", { class: "note error" }, failure(error)));
    return;
  }
  if (!interrupt) {
    place.replaceChildren();
    return;
  }
  const note = h("p", { class: "note", role: "status" });
  const silent = item.source === "voice" && !item.text;
  const answer = async (response: ResumeResponse) => {
    note.className = "note";
    note.textContent = response.status === "cancelled" ? "Dismissing…" : "Sending your answer…";
    place.querySelectorAll("button").forEach((button) => (button.disabled = true));
    try {
      const { end } = await resumeThread(item.threadId ?? "", [], interrupt, response);
      if (end.kind !== "finished") throw new Error(describeEnd(end));
      const fresh = await getCapture(item.id);
      const said =
        response.status === "cancelled"
          ? "Dismissed: it stays in your inbox."
          : fresh.status === "filed" && fresh.filedBucket
            ? `Filed under ${fresh.filedBucket}.`
            : statusOf(fresh) + ".";
      reshow(fresh, said);
    } catch (error) {
      note.className = "note error";
      note.textContent = failure(error);
      place.querySelectorAll("button").forEach((button) => (button.disabled = false));
    }
  };
  place.replaceChildren(
    questionView({
      key: item.id,
      interrupt,
      answer: (r) => void answer(r),
      discard: silent ? discard : undefined,
      hear: item.source === "voice" ? (audio, type) => spokenAnswer(item.id, audio, type).then((heard) => heard.text) : undefined,
    }),
    note,
  );
}
