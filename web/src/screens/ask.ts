// Ask: a question answered from your own captures, as a conversation. The run's tool calls show
// as steps as they happen ("Searching “kitchen”…"), the answer streams in, and its citations are
// cards that open their capture. A follow-up goes to the same agent: the same threadId, and the
// messages before it. The conversation lasts as long as the tab (sessionStorage).
import type { HttpAgent, Message } from "@ag-ui/client";
import { askAgent } from "../agui";
import { bucketBadge, h } from "../dom";

export interface Citation {
  captureId: string;
  bucket: string | null;
  title: string;
  quote: string;
}

const THREAD = "ask.thread";
const MESSAGES = "ask.messages";
let agent: HttpAgent | null = null;

function conversation(): HttpAgent {
  if (agent) return agent;
  let threadId = sessionStorage.getItem(THREAD);
  let messages: Message[] = [];
  try {
    messages = JSON.parse(sessionStorage.getItem(MESSAGES) ?? "[]") as Message[];
  } catch {
    messages = [];
  }
  if (!threadId) {
    threadId = `ask-${crypto.randomUUID()}`;
    sessionStorage.setItem(THREAD, threadId);
    messages = [];
  }
  agent = askAgent(threadId, messages);
  return agent;
}

function forget(): void {
  agent = null;
  sessionStorage.removeItem(THREAD);
  sessionStorage.removeItem(MESSAGES);
}

/** What a tool call is doing, in words. */
export function stepWords(name: string, args: Record<string, unknown>): string {
  if (name === "search") return `Searching “${String(args.query ?? "")}”…`;
  if (name === "person") return `Reading ${String(args.name ?? "their")}'s page…`;
  if (name === "list_bucket") return `Reading your ${String(args.bucket ?? "")} list…`;
  if (name === "get_capture") return "Reading a capture…";
  return `Using ${name}…`;
}

function resultWords(content: string): string {
  try {
    const result = JSON.parse(content) as { items?: unknown[]; error?: { message?: string } };
    if (result.error) return "nothing there";
    if (Array.isArray(result.items)) return `${result.items.length} found`;
    return "read";
  } catch {
    return "done";
  }
}

function citationCards(citations: Citation[]): HTMLElement {
  return h(
    "ol",
    { class: "citations", "aria-label": "Sources" },
    ...citations.map((c, n) =>
      h(
        "li",
        {},
        h(
          "a",
          { href: `#/captures/${encodeURIComponent(c.captureId)}`, class: "item cite" },
          h("span", { class: "marker" }, `[${n + 1}]`),
          h("span", { class: "title" }, c.title),
          h("span", { class: "quote" }, `“${c.quote}”`),
          h("span", { class: "meta" }, c.bucket ? bucketBadge(c.bucket) : h("span", {}, "Inbox")),
        ),
      ),
    ),
  );
}

/** One question and its answer, as the run tells it. */
async function askOnce(question: string, list: HTMLElement, status: HTMLElement): Promise<void> {
  const a = conversation();
  a.addMessage({ id: `q-${crypto.randomUUID()}`, role: "user", content: question });
  const steps = h("ul", { class: "steps", "aria-label": "What it looked at" });
  const answer = h("p", { class: "answer", "aria-live": "polite" });
  const turn = h(
    "li",
    { class: "turn" },
    h("p", { class: "asked" }, question),
    steps,
    answer,
  );
  list.append(turn);
  const doing = new Map<string, HTMLElement>();
  status.textContent = "Looking…";
  try {
    await a.runAgent(
      {},
      {
        onToolCallEndEvent: ({ event, toolCallName, toolCallArgs }) => {
          const step = h("li", { class: "doing" }, stepWords(toolCallName, toolCallArgs));
          doing.set(event.toolCallId, step);
          steps.append(step);
        },
        onToolCallResultEvent: ({ event }) => {
          const step = doing.get(event.toolCallId);
          if (!step) return;
          step.classList.remove("doing");
          step.textContent = `${step.textContent?.replace(/…$/, "")}: ${resultWords(typeof event.content === "string" ? event.content : "")}`;
        },
        onTextMessageContentEvent: ({ event }) => {
          answer.textContent = (answer.textContent ?? "") + event.delta;
          status.textContent = "Answering…";
        },
        onTextMessageEndEvent: ({ event }) => {
          const citations = ((event.metadata ?? {}) as { citations?: Citation[] }).citations ?? [];
          if (citations.length) turn.append(citationCards(citations));
        },
        onRunErrorEvent: ({ event }) => {
          answer.textContent = event.message;
          answer.classList.add("error");
        },
      },
    );
    status.textContent = "";
  } catch (error) {
    answer.textContent = error instanceof Error ? error.message : "Something went wrong.";
    answer.classList.add("error");
    status.textContent = "";
  }
  sessionStorage.setItem(MESSAGES, JSON.stringify(a.messages));
}

export function askScreen(first: string): HTMLElement {
  const input = h("textarea", {
    id: "ask-q",
    name: "q",
    rows: 2,
    required: true,
    maxlength: 1000,
    enterkeyhint: "send",
    placeholder: "Who's doing the kitchen tiles?",
  });
  const list = h("ol", { class: "conversation", "aria-label": "Questions and answers" });
  const status = h("p", { class: "note", role: "status" });
  const fresh = h("button", { type: "button", class: "secondary" }, "New conversation");
  fresh.addEventListener("click", () => {
    forget();
    list.replaceChildren();
    input.focus();
  });
  const send = async (q: string) => {
    input.value = "";
    input.disabled = true;
    await askOnce(q, list, status);
    input.disabled = false;
    input.focus();
  };
  const form = h(
    "form",
    { class: "search ask-form" },
    h("label", { for: "ask-q" }, "Ask your captures"),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary" }, "Ask")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (!q) return input.focus();
    void send(q);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  if (first) {
    history.replaceState(null, "", "#/ask");
    void send(first);
  }
  return h(
    "section",
    { class: "screen", "aria-labelledby": "ask-title" },
    h("h2", { id: "ask-title", class: "visually-hidden", tabindex: "-1" }, "Ask"),
    list,
    status,
    form,
    fresh,
  );
}
