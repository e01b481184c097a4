// Search: every capture's text, title, answers and transcript, best match first; a result
// opens its capture. The query is kept in the address, so Back from a result returns here.
import { bucketBadge, h, when } from "../dom";
import { search } from "../recall";
import { statusOf } from "./inbox";

export function searchScreen(query: string): HTMLElement {
  const input = h("input", {
    id: "search-q",
    name: "q",
    type: "search",
    required: true,
    maxlength: 200,
    autocomplete: "off",
    enterkeyhint: "search",
    value: query,
  });
  const results = h("ul", { class: "inbox", "aria-label": "Results, best first" });
  const status = h("p", { class: "note", role: "status" });
  const run = async (q: string) => {
    status.textContent = "Searching…";
    try {
      const found = await search(q);
      results.replaceChildren(
        ...found.map((f) =>
          h(
            "li",
            {},
            h(
              "a",
              { href: `#/captures/${f.id}`, class: "item" },
              h("span", { class: "title" }, f.title || f.snippet),
              f.snippet ? h("span", { class: "snippet" }, f.snippet) : null,
              h("span", { class: "meta" }, f.bucket ? bucketBadge(f.bucket) : h("span", {}, statusOf(f)), h("span", {}, when(f.createdAt))),
            ),
          ),
        ),
      );
      status.textContent = found.length ? `${found.length} found.` : `Nothing matches “${q}”.`;
    } catch (error) {
      status.textContent = error instanceof Error ? error.message : "Something went wrong.";
    }
  };
  const ask = h("a", { href: "#/ask", id: "ask-link" }, "ask a question");
  // What is typed goes with it: asking is searching in a sentence.
  ask.addEventListener("click", (event) => {
    const q = input.value.trim();
    if (!q) return;
    event.preventDefault();
    location.hash = `#/ask?q=${encodeURIComponent(q)}`;
  });
  const form = h(
    "form",
    { role: "search", class: "search" },
    h("label", { for: "search-q" }, "Search your captures"),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary" }, "Search")),
    h("p", { class: "note" }, "Or ", ask, " and get an answer with its sources."),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (!q) return input.focus();
    history.replaceState(null, "", `#/search?q=${encodeURIComponent(q)}`);
    void run(q);
  });
  if (query) void run(query);
  return h(
    "section",
    { class: "screen", "aria-labelledby": "search-title" },
    h("h2", { id: "search-title", class: "visually-hidden", tabindex: "-1" }, "Search"),
    form,
    status,
    results,
  );
}
