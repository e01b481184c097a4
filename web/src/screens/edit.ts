// The edit sheet: a filed item's title, due date and next action, sent as a merge patch with
// the item's ETag. Changed meanwhile elsewhere (412): the sheet says so, and reloads on asking.
import { ApiError, type FieldError } from "../api";
import { h } from "../dom";
import { editFiled, type Edit, type FiledView } from "../recall";

// The API's limits (PATCH /api/captures/{id}, docs/contract.md): the sheet takes no more than
// the API keeps.
const TITLE_MAX = 120;
const NEXT_ACTION_MAX = 200;

// The fields as the sheet names them, for the API's field errors.
const LABELS: Record<string, string> = { title: "Title", dueDate: "Due date", nextAction: "Next action", done: "Done" };

/** What the API refused, in the sheet's words: each field error under the field's label
 * ("Title: at most 120 characters."), else the problem's `detail`. */
export function refusalOf(error: unknown): string {
  if (!(error instanceof Error)) return "Something went wrong.";
  const errors: FieldError[] = error instanceof ApiError ? error.errors : [];
  if (errors.length === 0) return error.message;
  return errors
    .map(({ loc, msg }) => {
      const field = loc.split(".").pop() ?? "";
      const words = msg.replace(/^String should have /, "").replace(/\.$/, "");
      return LABELS[field] ? `${LABELS[field]}: ${words}.` : `${words}.`;
    })
    .join(" ");
}

export function openEditor(
  item: FiledView,
  reload: () => Promise<FiledView | null>,
  saved: (fresh: FiledView) => void,
): void {
  const opener = document.activeElement as HTMLElement | null;
  const field = (id: string, label: string, input: HTMLInputElement, hint?: string) =>
    h(
      "div",
      { class: "field" },
      h("label", { for: id }, label),
      input,
      hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null,
    );
  const title = h("input", { id: "edit-title", name: "title", type: "text", required: true, maxlength: TITLE_MAX });
  const due = h("input", { id: "edit-due", name: "dueDate", type: "date", "aria-describedby": "edit-due-hint" });
  const next = h("input", { id: "edit-next", name: "nextAction", type: "text", maxlength: NEXT_ACTION_MAX });
  const status = h("p", { class: "note", role: "status" });
  const reloadButton = h("button", { type: "button", class: "secondary", hidden: true }, "Reload");
  const fill = (from: FiledView) => {
    item = from;
    title.value = from.title;
    due.value = from.dueDate ?? "";
    next.value = from.nextAction ?? "";
  };
  fill(item);
  const form = h(
    "form",
    {},
    field("edit-title", "Title", title),
    field("edit-due", "Due date", due, "Leave it empty for no date."),
    item.bucket === "Projects" || item.nextAction ? field("edit-next", "Next action", next) : null,
    status,
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary" }, "Save"),
      reloadButton,
      h("button", { type: "button", class: "link", onclick: () => sheet.close() }, "Cancel"),
    ),
    h("a", { href: `#/captures/${item.id}`, class: "back", onclick: () => sheet.close() }, "Open the capture"),
  );
  const sheet = h(
    "dialog",
    { class: "sheet", "aria-labelledby": "edit-heading" },
    h("h2", { id: "edit-heading" }, "Edit"),
    form,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const edit: Edit = {};
    if (title.value.trim() !== item.title) edit.title = title.value.trim();
    if ((due.value || null) !== item.dueDate) edit.dueDate = due.value || null;
    if (next.isConnected && (next.value.trim() || null) !== item.nextAction) edit.nextAction = next.value.trim() || null;
    if (Object.keys(edit).length === 0) return sheet.close();
    status.className = "note";
    status.textContent = "Saving…";
    try {
      const fresh = await editFiled(item, edit);
      saved(fresh);
      sheet.close();
    } catch (error) {
      const stale = error instanceof ApiError && error.status === 412;
      status.className = "note error";
      status.textContent = stale
        ? "This was changed somewhere else since you opened it, so nothing was saved. Reload it, then make your change again."
        : refusalOf(error);
      // The field the API refused is marked, and the keyboard goes to it.
      const refused = error instanceof ApiError ? error.errors.map((e) => e.loc.split(".").pop()) : [];
      for (const input of [title, due, next]) {
        if (refused.includes(input.name)) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
      }
      if (!stale) form.querySelector<HTMLElement>("[aria-invalid]")?.focus();
      reloadButton.hidden = !stale;
      if (stale) reloadButton.focus();
    }
  });
  reloadButton.addEventListener("click", async () => {
    status.className = "note";
    status.textContent = "Reloading…";
    const fresh = await reload().catch(() => undefined);
    if (fresh === undefined) {
      status.textContent = "It could not be reloaded; try again.";
      return;
    }
    if (fresh === null) {
      status.textContent = "It is no longer there: deleted or moved to another list.";
      return;
    }
    fill(fresh);
    saved(fresh);
    reloadButton.hidden = true;
    status.textContent = "Reloaded: this is the latest. Make your change again and save.";
    title.focus();
  });
  sheet.addEventListener("close", () => {
    sheet.remove();
    if (opener?.isConnected) opener.focus();
  });
  document.body.append(sheet);
  sheet.showModal();
}
