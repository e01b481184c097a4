// Today: the day's digest (what is due, what waits for an answer, next actions, people to
// follow up, what came in yesterday) and, on the review day, the weekly review. A digest
// push opens it (#/today). Until the user turns the digest on, it offers to, in this
// browser's time zone.
import { apiUrl, authHeaders, checkedFetch } from "../api";
import { h } from "../dom";

interface Entry {
  id: string;
  bucket: string;
  title: string;
  dueDate: string | null;
  nextAction: string | null;
  followUp: string | null;
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
}

async function get<T>(path: string): Promise<T> {
  const response = await checkedFetch(apiUrl(path), { headers: authHeaders() });
  return (await response.json()) as T;
}

/** The digest on, the rest as it was; a user who never set any gets this browser's zone. */
async function turnOn(prefs: Preferences): Promise<Preferences> {
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const { digestAt, weeklyReviewDay, reminders } = prefs;
  const timeZone = prefs.saved ? prefs.timeZone : browserZone;
  const response = await checkedFetch(apiUrl("/preferences"), {
    method: "PUT",
    headers: { ...authHeaders(), "Content-Type": "application/json" },
    body: JSON.stringify({ timeZone, digestAt, digest: true, weeklyReviewDay, reminders }),
  });
  return (await response.json()) as Preferences;
}

function section<T>(title: string, items: T[], line: (item: T) => Node): HTMLElement | null {
  if (items.length === 0) return null;
  return h(
    "section",
    { class: "digest-section", "aria-label": title },
    h("h3", {}, `${title} (${items.length})`),
    h("ul", { class: "inbox" }, ...items.map((item) => h("li", {}, line(item)))),
  );
}

function link(id: string, text: string, meta?: string | null): HTMLElement {
  return h(
    "a",
    { href: `#/captures/${id}`, class: "item" },
    h("span", { class: "title" }, text),
    meta ? h("span", { class: "meta" }, meta) : null,
  );
}

function digestView(digest: Digest): HTMLElement[] {
  const parts = [
    section("Due", digest.due, (e) => link(e.id, e.title, e.dueDate === digest.date ? "today" : `overdue · ${e.dueDate}`)),
    section("To answer", digest.questions, (q) => link(q.id, q.title, q.question)),
    section("Next actions", digest.nextActions, (e) => link(e.id, e.nextAction ?? e.title, e.title)),
    section("To follow up", digest.followUps, (e) => link(e.id, e.followUp ?? e.title, e.title)),
    section("Came in yesterday", digest.yesterday, (c) => link(c.id, c.title, c.bucket)),
  ].filter((part): part is HTMLElement => part !== null);
  return parts.length ? parts : [h("p", { class: "note" }, "Nothing due and nothing waiting. A clear day.")];
}

function reviewView(review: Review): HTMLElement {
  const counts = Object.entries(review.capturesPerBucket)
    .filter(([, n]) => n > 0)
    .map(([bucket, n]) => `${n} ${bucket}`)
    .join(" · ");
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
      parts.push(...digestView(digest));
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
      h("h2", { id: "today-title", tabindex: "-1" }, "Today"),
      h("button", { type: "button", class: "link", onclick: () => void load() }, "Refresh"),
    ),
    status,
    body,
  );
}
