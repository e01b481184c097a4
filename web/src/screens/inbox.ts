// The inbox: every capture of the user, newest first, a page at a time; one capture opened,
// moved to another bucket (the one-tap fix) or deleted.
import { BUCKETS, deleteCapture, getCapture, getInbox, pickBucket, type Bucket, type InboxItem } from "../api";
import { bucketBadge, h, when } from "../dom";
import { apply, forget } from "../sync";
import { sureness } from "../words";

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

export function itemScreen(id: string): HTMLElement {
  const body = h("div", { class: "detail" }, h("p", { class: "note" }, "Loading…"));
  const section = h(
    "section",
    { class: "screen", "aria-labelledby": "item-title" },
    h("a", { href: "#/inbox", class: "back" }, "← Inbox"),
    h("h2", { id: "item-title", tabindex: "-1" }, "Capture"),
    body,
  );
  getCapture(id).then(
    (item) => show(section, body, item),
    (error) => body.replaceChildren(h("p", { class: "note", role: "alert" }, failure(error))),
  );
  return section;
}

function show(section: HTMLElement, body: HTMLElement, item: InboxItem): void {
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

  const move = async (bucket: Bucket) => {
    status.textContent = `Moving to ${bucket}…`;
    try {
      const moved = await pickBucket(item.id, bucket);
      apply(moved); // the Capture screen's card of it moves too
      show(section, body, moved);
      body.querySelector<HTMLElement>("[role=status]")!.textContent = `Moved to ${bucket}.`;
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
      location.hash = "#/inbox";
    } catch (error) {
      status.textContent = failure(error);
    }
  };

  const hasText = Boolean(item.text);
  const parts = [
    item.text ? h("p", { class: "said" }, item.text) : null,
    ...(item.clarifications ?? []).map((c) => h("p", { class: "said answer" }, `You answered: ${c.text}`)),
    h("dl", { class: "facts" }, ...facts.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)])),
    hasText
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
