// What the second brain gives back: a list per bucket (Admin a to-do list with due dates,
// Projects with next actions, People as the people named and the notes about them, Ideas),
// and a person's page. Admin, Projects and People items have a tick: done, they leave their
// list (and Today) unless "Show done too".
import { ApiError, BUCKETS, type Bucket } from "../api";
import { bucketBadge, h, when } from "../dom";
import { editFiled, getBucket, getPeople, getPerson, type FiledView } from "../recall";
import { openEditor } from "./edit";

const failure = (error: unknown) => (error instanceof Error ? error.message : "Something went wrong.");

/** `#/lists/<bucket>`, lower case; an unknown one is Admin. */
export function bucketOf(slug: string | undefined): Bucket {
  return BUCKETS.find((b) => b.toLowerCase() === slug) ?? "Admin";
}

function switcher(current: Bucket): HTMLElement {
  return h(
    "nav",
    { class: "buckets", "aria-label": "Lists" },
    ...BUCKETS.map((b) =>
      h(
        "a",
        { href: `#/lists/${b.toLowerCase()}`, class: b.toLowerCase(), "aria-current": b === current ? "page" : null },
        b,
      ),
    ),
  );
}

export function listScreen(bucket: Bucket): HTMLElement {
  const section = h(
    "section",
    { class: "screen", "aria-labelledby": "list-title" },
    switcher(bucket),
    h("h2", { id: "list-title", class: "visually-hidden", tabindex: "-1" }, bucket),
  );
  if (bucket === "People") section.append(peopleList());
  section.append(bucketList(bucket));
  return section;
}

/** What can be ticked done: a task, a project's next action, a person to follow up. An idea is
 * kept to revisit, not done. */
const TICKED: readonly Bucket[] = ["Admin", "Projects", "People"];

/** The filed items of one bucket, a page at a time; a ticked bucket's open ones unless asked. */
function bucketList(bucket: Bucket): HTMLElement {
  const items = h("ul", { class: "filed", "aria-label": bucket === "People" ? "Notes about people" : bucket });
  const status = h("p", { class: "note", role: "status" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const showDone = h("input", { id: "show-done", type: "checkbox" });
  let token: string | null = null;
  const load = async (reset: boolean) => {
    status.textContent = "Loading…";
    more.disabled = true;
    try {
      const filters = TICKED.includes(bucket) && !showDone.checked ? { done: false } : {};
      const page = await getBucket(bucket, reset ? null : token, filters);
      if (reset) items.replaceChildren();
      items.append(...page.items.map((item) => row(item, { reload: () => load(true), status, find: (id) => findIn(bucket, id) })));
      token = page.continuationToken;
      status.textContent = items.children.length === 0 ? empty(bucket, showDone.checked) : "";
      more.hidden = !token;
    } catch (error) {
      status.textContent = failure(error);
    } finally {
      more.disabled = false;
    }
  };
  showDone.addEventListener("change", () => void load(true));
  more.addEventListener("click", () => void load(false));
  void load(true);
  return h(
    "div",
    {},
    bucket === "People" ? h("h3", {}, "Notes about people") : null,
    TICKED.includes(bucket)
      ? h("div", { class: "switch filter" }, showDone, h("label", { for: "show-done" }, "Show done too"))
      : null,
    items,
    status,
    more,
  );
}

function empty(bucket: Bucket, withDone: boolean): string {
  if (TICKED.includes(bucket) && !withDone) return bucket === "Admin" ? "Nothing left to do." : `Nothing open in ${bucket}.`;
  return `Nothing in ${bucket} yet.`;
}

interface RowContext {
  reload: () => Promise<void>; // the list again, as the API has it now
  status: HTMLElement; // where the list says what happened
  withBucket?: boolean; // a person's page mixes the buckets
  find: (id: string) => Promise<FiledView | null>; // the item as it is now; null once gone
}

/** The API has no route for one filed item: its bucket's pages answer for it. */
async function findIn(bucket: Bucket, id: string): Promise<FiledView | null> {
  let token: string | null = null;
  for (let pages = 0; pages < 10; pages++) {
    const page = await getBucket(bucket, token);
    const found = page.items.find((i) => i.id === id);
    if (found || !page.continuationToken) return found ?? null;
    token = page.continuationToken;
  }
  return null;
}

/** One filed item: Admin's with its due date, Projects' with the next action, Ideas' with the
 * one-liner; a tick on all but Ideas; each with Edit. An Admin item's title is its tick's
 * label; the others' lead to the capture, and their tick is named by the title. */
function row(item: FiledView, context: RowContext): HTMLLIElement {
  const li = h("li", { class: item.done ? "done" : null, "data-id": item.id });
  // One Edit button for the row's life: the sheet gives the keyboard back to it once saved.
  const edit = h("button", { type: "button", class: "link" }, "Edit");
  edit.addEventListener("click", () => openEditor(item, () => context.find(item.id), render));
  const render = (current: FiledView) => {
    item = current;
    li.className = current.done ? "done" : "";
    const admin = current.bucket === "Admin";
    const ticked = TICKED.includes(current.bucket);
    const tick = h("input", { id: `done-${current.id}`, type: "checkbox", "aria-label": admin ? null : current.title });
    tick.checked = current.done;
    tick.addEventListener("change", () => void toggle(tick));
    const heading = admin
      ? h("label", { for: tick.id, class: "title" }, current.title)
      : h("a", { href: `#/captures/${current.id}`, class: "title" }, current.title);
    const details = [
      context.withBucket ? bucketBadge(current.bucket) : null,
      current.dueDate ? due(current.dueDate, current.done) : null,
      // Filed, a project's next action is its title: shown once the user makes it another.
      current.nextAction && current.nextAction !== current.title ? h("span", {}, `Next: ${current.nextAction}`) : null,
      current.oneLiner && current.oneLiner !== current.title ? h("span", {}, current.oneLiner) : null,
      // Who it names, except where that goes without saying (People, a person's own page).
      current.people.length && current.bucket !== "People" && !context.withBucket ? h("span", {}, `with ${current.people.join(", ")}`) : null,
      admin ? null : h("span", {}, when(current.createdAt)),
    ].filter((part) => part !== null);
    edit.setAttribute("aria-label", `Edit ${current.title}`);
    li.replaceChildren(
      ...(ticked ? [tick] : []),
      h("div", { class: "body" }, heading, details.length ? h("p", { class: "meta" }, ...details) : null),
      edit,
    );
  };
  // Ticking is a merge patch of `done` with the item's ETag.
  const toggle = async (tick: HTMLInputElement) => {
    tick.disabled = true;
    try {
      render(await editFiled(item, { done: tick.checked }));
      context.status.textContent = "";
      li.querySelector<HTMLElement>("input")?.focus();
    } catch (error) {
      tick.checked = !tick.checked;
      tick.disabled = false;
      if (error instanceof ApiError && error.status === 412) {
        await context.reload();
        context.status.textContent = "That item had changed elsewhere: here is the latest. Tick it again if you still mean to.";
      } else context.status.textContent = failure(error);
    }
  };
  render(item);
  return li;
}

/** "Due tomorrow", "Overdue · Mon 24 Nov", "Due Fri 28 Nov". */
function due(date: string, done: boolean): HTMLElement {
  const [y, m, d] = date.split("-").map(Number);
  const day = new Date(y, m - 1, d);
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const days = Math.round((day.getTime() - today.getTime()) / 86_400_000);
  const shown = day.toLocaleDateString([], { weekday: "short", day: "numeric", month: "short" });
  const words = days === 0 ? "Due today" : days === 1 ? "Due tomorrow" : days < 0 && !done ? `Overdue · ${shown}` : `Due ${shown}`;
  return h("time", { datetime: date, class: days < 0 && !done ? "overdue" : "due" }, words);
}

/** The People list: everyone named, most recently first, each leading to their page. */
function peopleList(): HTMLElement {
  const list = h("ul", { class: "people", "aria-label": "People" });
  const status = h("p", { class: "note", role: "status" }, "Loading…");
  getPeople().then(
    (people) => {
      status.textContent = people.length ? "" : "Nobody named yet.";
      list.replaceChildren(
        ...people.map((p) => {
          const open = p.openItems ? ` · ${p.openItems} open` : "";
          return h(
            "li",
            {},
            h(
              "a",
              { href: `#/people/${encodeURIComponent(p.name)}`, class: "item" },
              h("span", { class: "title" }, p.name),
              h("span", { class: "meta" }, `${p.mentions} ${p.mentions === 1 ? "mention" : "mentions"}${open} · ${when(p.lastMentionedAt)}`),
            ),
          );
        }),
      );
    },
    (error) => (status.textContent = failure(error)),
  );
  return h("div", {}, h("h3", {}, "Everyone named"), list, status);
}

/** A person's page: every filed item naming them, across the buckets, a page at a time. */
export function personScreen(name: string): HTMLElement {
  const heading = h("h2", { id: "person-title", tabindex: "-1" }, name);
  const items = h("ul", { class: "filed", "aria-labelledby": "person-title" });
  const status = h("p", { class: "note", role: "status" }, "Loading…");
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  let token: string | null = null;
  const load = async (reset: boolean) => {
    more.disabled = true;
    try {
      const person = await getPerson(name, reset ? null : token);
      heading.textContent = person.name;
      if (reset) items.replaceChildren();
      items.append(
        ...person.items.map((item) =>
          row(item, { reload: () => load(true), status, withBucket: true, find: (id) => findIn(item.bucket, id) }),
        ),
      );
      token = person.continuationToken;
      more.hidden = !token;
      status.textContent = "";
    } catch (error) {
      status.textContent = error instanceof ApiError && error.status === 404 ? `Nobody called ${name} is named in your captures.` : failure(error);
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void load(false));
  void load(true);
  return h(
    "section",
    { class: "screen", "aria-labelledby": "person-title" },
    h("a", { href: "#/lists/people", class: "back" }, "← People"),
    heading,
    items,
    status,
    more,
  );
}
