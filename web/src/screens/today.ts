// Today: the day's digest (what is due, what waits for an answer, next actions, people to
// follow up, what came in yesterday) and, on the review day, the weekly review. A digest
// push opens it (#/today). Each capture is shown once; what is due, a next action or a
// follow-up has a tick, and ticked it leaves the screen. Until the user turns the digest
// on, it offers to, in this browser's time zone.
import { ApiError, apiUrl, authHeaders, checkedFetch } from "../api";
import { h } from "../dom";
import { editFiled } from "../recall";

interface Entry {
  id: string;
  bucket: string;
  title: string;
  dueDate: string | null;
  nextAction: string | null;
  followUp: string | null;
  etag: string | null; // the filed item's, for the tick's If-Match
}
interface Question {
  id: string;
  title: string;
  question: string | null;
}
interface Came {
  id: string;
  title: string;
  bucket: string | null;
}
interface Digest {
  date: string;
  due: Entry[];
  questions: Question[];
  nextActions: Entry[];
  followUps: Entry[];
  yesterday: Came[];
  reviewDay: boolean;
}
interface Review {
  week: string;
  capturesPerBucket: Record<string, number>;
  capturesTotal: number;
  quietProjects: Entry[];
  ideas: Entry[];
  summary: string;
}
interface Preferences {
  digest: boolean;
  saved: boolean;
  digestAt: string;
  timeZone: string;
  weeklyReviewDay: string;
  reminders: boolean;
  keepAudio?: boolean;
  audioRetentionDays?: number | null;
}

async function get<T>(path: string): Promise<T> {
  const response = await checkedFetch(apiUrl(path), { headers: authHeaders() });
  return (await response.json()) as T;
}

/** The digest on, the rest as it was; a user who never set any gets this browser's zone. */
async function turnOn(prefs: Preferences): Promise<Preferences> {
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  // A PUT sets every preference: the recordings' ones go back as they were.
  const { digestAt, weeklyReviewDay, reminders, keepAudio, audioRetentionDays } = prefs;
  const timeZone = prefs.saved ? prefs.timeZone : browserZone;
  const response = await checkedFetch(apiUrl("/preferences"), {
    method: "PUT",
    headers: { ...authHeaders(), "Content-Type": "application/json" },
    body: JSON.stringify({ timeZone, digestAt, digest: true, weeklyReviewDay, reminders, keepAudio, audioRetentionDays }),
  });
  return (await response.json()) as Preferences;
}

function section<T>(title: string, items: T[], line: (item: T) => Node): HTMLElement | null {
  if (items.length === 0) return null;
  return h(
    "section",
    { class: "digest-section", "aria-label": title, "data-title": title },
    h("h3", {}, `${title} (${items.length})`),
    h("ul", { class: "inbox" }, ...items.map((item) => h("li", {}, line(item)))),
  );
}

/** A row ticked off leaves its section, and the count follows (an empty section goes). */
function leave(row: HTMLElement): void {
  const li = row.closest("li");
  const part = li?.closest<HTMLElement>("section.digest-section");
  li?.remove();
  if (!part) return;
  const left = part.querySelectorAll("li").length;
  if (left === 0) part.remove();
  else part.querySelector("h3")!.textContent = `${part.dataset.title} (${left})`;
}

function link(id: string, text: string, meta?: string | null): HTMLElement {
  return h(
    "a",
    { href: `#/captures/${id}`, class: "item" },
    h("span", { class: "title" }, text),
    meta ? h("span", { class: "meta" }, meta) : null,
  );
}

interface Ticks {
  done: (entry: Entry, said: string) => void; // ticked: say so
  stale: () => void; // changed elsewhere: the day again, as it is now
  failed: (message: string) => void;
}

/** An entry with its tick: a merge patch of `done` under the ETag the digest read. */
function tickable(entry: Entry, ticks: Ticks, text: string, meta?: string | null): HTMLElement {
  const tick = h("input", { type: "checkbox", "aria-label": `Done: ${text}` });
  const row = h("div", { class: "tickable" }, tick, link(entry.id, text, meta));
  tick.addEventListener("change", async () => {
    tick.disabled = true;
    try {
      await editFiled({ id: entry.id, etag: entry.etag ?? "" }, { done: true });
      leave(row);
      ticks.done(entry, text);
    } catch (error) {
      tick.checked = false;
      tick.disabled = false;
      if (error instanceof ApiError && error.status === 412) ticks.stale();
      else ticks.failed(error instanceof Error ? error.message : "Something went wrong.");
    }
  });
  return row;
}

/** "Mon 24 Nov", from YYYY-MM-DD (a local day: no time zone to shift it). */
function shortDay(day: string): string {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d).toLocaleDateString([], { weekday: "short", day: "numeric", month: "short" });
}

const clear = () => h("p", { class: "note" }, "Nothing due and nothing waiting. A clear day.");

/** What a line says beside its main words, when it says something else. */
const other = (words: string | null, main: string): string | null => (words && words !== main ? words : null);

function digestView(digest: Digest, ticks: Ticks): HTMLElement[] {
  const dueWords = (e: Entry) => {
    const when = e.dueDate === digest.date ? "today" : `overdue · ${shortDay(e.dueDate ?? "")}`;
    return e.bucket === "Admin" ? when : `${when} · ${e.bucket}`;
  };
  // Each capture once: what came in yesterday and is listed above is not listed again.
  const above = new Set([...digest.due, ...digest.questions, ...digest.nextActions, ...digest.followUps].map((e) => e.id));
  const yesterday = digest.yesterday.filter((c) => !above.has(c.id));
  const parts = [
    section("Due", digest.due, (e) => tickable(e, ticks, e.title, dueWords(e))),
    section("To answer", digest.questions, (q) => link(q.id, q.title, q.question)),
    section("Next actions", digest.nextActions, (e) => {
      const action = e.nextAction ?? e.title;
      return tickable(e, ticks, action, other(e.title, action));
    }),
    section("To follow up", digest.followUps, (e) => {
      const follow = e.followUp ?? e.title;
      return tickable(e, ticks, follow, other(e.title, follow));
    }),
    section("Came in yesterday", yesterday, (c) => link(c.id, c.title, c.bucket)),
  ].filter((part): part is HTMLElement => part !== null);
  return parts.length ? parts : [clear()];
}

function reviewView(review: Review): HTMLElement {
  // Every part of the count, so that it adds up to the total.
  const parts = Object.entries(review.capturesPerBucket)
    .filter(([, n]) => n > 0)
    .map(([bucket, n]) => (bucket === "unfiled" ? `${n} not filed yet` : `${n} ${bucket}`));
  const total = `${review.capturesTotal} ${review.capturesTotal === 1 ? "capture" : "captures"}`;
  const counts = parts.length ? `${total}: ${parts.join(" · ")}` : "";
  return h(
    "section",
    { class: "digest-section review", "aria-label": "Weekly review" },
    h("h3", {}, `Weekly review · ${review.week}`),
    h("p", {}, review.summary),
    counts ? h("p", { class: "note" }, counts) : null,
    section("Gone quiet", review.quietProjects, (e) => link(e.id, e.title)) ?? "",
    section("Ideas to revisit", review.ideas, (e) => link(e.id, e.title)) ?? "",
  );
}

export function todayScreen(): HTMLElement {
  const body = h("div", {});
  const status = h("p", { class: "note", role: "status" }, "Loading…");

  const load = async () => {
    status.textContent = "Loading…";
    try {
      const prefs = await get<Preferences>("/preferences");
      const digest = await get<Digest>("/digest");
      const parts: HTMLElement[] = [];
      if (!prefs.digest) {
        const on = h("button", { type: "button", class: "secondary" }, "Send me this every morning");
        on.addEventListener("click", () => {
          on.disabled = true;
          void turnOn(prefs).then(load, (error: Error) => {
            status.textContent = error.message;
            on.disabled = false;
          });
        });
        parts.push(h("p", { class: "note" }, "The daily digest is off. ", on));
      } else {
        parts.push(h("p", { class: "note" }, `Every day at ${prefs.digestAt} (${prefs.timeZone}).`));
      }
      const ticks: Ticks = {
        done: (_, said) => {
          status.textContent = `Done: ${said}.`;
          // The last one ticked: a clear day, said under the digest's own line.
          if (!body.querySelector(":scope > .digest-section:not(.review)")) body.firstElementChild?.after(clear());
        },
        stale: () => {
          void load().then(() => {
            status.textContent = "That item had changed elsewhere: here is the latest. Tick it again if you still mean to.";
          });
        },
        failed: (message) => (status.textContent = message),
      };
      parts.push(...digestView(digest, ticks));
      if (digest.reviewDay) parts.push(reviewView(await get<Review>("/review")));
      body.replaceChildren(...parts);
      status.textContent = "";
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : "Something went wrong.";
    }
  };
  void load();

  return h(
    "section",
    { class: "screen", "aria-labelledby": "today-title" },
    h(
      "div",
      { class: "title-row" },
      // The bar already says "Today": the heading is for screen readers only.
      h("h2", { id: "today-title", class: "visually-hidden", tabindex: "-1" }, "Today"),
      h("button", { type: "button", class: "link", onclick: () => void load() }, "Refresh"),
    ),
    status,
    body,
  );
}
