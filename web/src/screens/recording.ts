// A voice note's recording on its page: a player fed by the authenticated audio route (fetched
// with the key into a Blob URL), the transcript by segment (tap one to play from its start),
// and the two actions on the recording: transcribe it again, delete it alone.
import { deleteAudio, getAudio, getCapture, transcribeAgain, type InboxItem, type Segment } from "../api";
import { h } from "../dom";
import { clock } from "../recorder";

function failure(error: unknown): string {
  return error instanceof Error ? error.message : "Something went wrong.";
}

// The Blob URL of the recording on screen: let go when another takes its place.
let playing: string | null = null;

export function recordingPanel(item: InboxItem, reshow: (fresh: InboxItem, said: string) => void): HTMLElement | null {
  if (item.source !== "voice" || item.text === null) return null;
  const segments = item.transcriptSegments ?? [];
  const status = h("p", { class: "note", role: "status" });
  const title = h("h3", { id: "recording-title" }, "Recording");
  if (!item.audioBlob) {
    const gone = item.audioDeletedAt
      ? `Deleted on ${new Date(item.audioDeletedAt).toLocaleDateString([], { dateStyle: "medium" })}; the words stay.`
      : "Not kept.";
    return h(
      "section",
      { class: "recording-panel", "aria-labelledby": title.id },
      title,
      h("p", { class: "note" }, gone),
      segments.length ? segmentList(segments, null) : null,
    );
  }
  const player = h("audio", { controls: true, preload: "metadata", "aria-label": "Recording" });
  const list = segments.length ? segmentList(segments, player) : null;
  void getAudio(item.id).then(
    (blob) => {
      if (playing) URL.revokeObjectURL(playing);
      playing = URL.createObjectURL(blob);
      player.src = playing;
    },
    (error) => (status.textContent = failure(error)),
  );

  const pending = Boolean(
    item.transcriptionRequestedAt && (!item.transcribedAt || item.transcribedAt < item.transcriptionRequestedAt),
  );
  const again = h("button", { type: "button", class: "secondary", disabled: pending }, "Transcribe again");
  const follow = async () => {
    status.textContent = "Transcribing again…";
    again.disabled = true;
    // The job runs on the API's side: its new words are there once transcribedAt catches up.
    for (let wait = 0; wait < 120; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const fresh = await getCapture(item.id);
      const asked = fresh.transcriptionRequestedAt ?? "";
      if (fresh.transcribedAt && fresh.transcribedAt >= asked) {
        if (section.isConnected) reshow(fresh, "Transcribed again.");
        return;
      }
    }
    status.textContent = "Still transcribing; look again in a moment.";
  };
  again.addEventListener("click", () => {
    status.textContent = "Asking for a new transcript…";
    transcribeAgain(item.id).then(follow, (error) => {
      status.textContent = failure(error);
      again.disabled = false;
    });
  });
  if (pending) void follow();

  const confirm = h(
    "div",
    { class: "confirm", hidden: true, role: "group", "aria-label": "Confirm deleting the recording" },
    h("p", {}, "Delete the recording? Its words stay."),
    h(
      "div",
      { class: "row" },
      h("button", { type: "button", class: "danger", onclick: () => void remove() }, "Delete recording"),
      h("button", { type: "button", class: "secondary", onclick: () => toggle(false) }, "Keep it"),
    ),
  );
  const deleteButton = h("button", { type: "button", class: "danger-outline", onclick: () => toggle(true) }, "Delete recording");
  const toggle = (open: boolean) => {
    confirm.hidden = !open;
    deleteButton.hidden = open;
    (open ? confirm.querySelector("button") : deleteButton)?.focus();
  };
  const remove = async () => {
    status.textContent = "Deleting the recording…";
    try {
      await deleteAudio(item.id);
      player.pause();
      reshow(await getCapture(item.id), "Recording deleted; the words stay.");
    } catch (error) {
      status.textContent = failure(error);
    }
  };
  const section = h(
    "section",
    { class: "recording-panel", "aria-labelledby": title.id },
    title,
    player,
    list,
    h("div", { class: "row" }, again, deleteButton),
    confirm,
    status,
  );
  return section;
}

/** The transcript a segment a line, each with its start; with a player, a tap plays from there
 * and the segment being played is marked. */
function segmentList(segments: Segment[], player: HTMLAudioElement | null): HTMLElement {
  const items = segments.map((s) => {
    const at = h("span", { class: "at" }, clock(s.start));
    const content = player
      ? h(
          "button",
          {
            type: "button",
            class: "segment",
            title: `Play from ${clock(s.start)}`,
            onclick: () => {
              player.currentTime = s.start;
              void player.play().catch(() => undefined);
            },
          },
          at,
          " ",
          h("span", { class: "words" }, s.text),
        )
      : h("span", { class: "segment" }, at, " ", h("span", { class: "words" }, s.text));
    return h("li", {}, content);
  });
  if (player) {
    player.addEventListener("timeupdate", () => {
      const t = player.currentTime;
      segments.forEach((s, n) => {
        const now = t >= s.start && t < s.end;
        items[n].classList.toggle("playing", now);
        if (now) items[n].setAttribute("aria-current", "true");
        else items[n].removeAttribute("aria-current");
      });
    });
  }
  return h("ol", { class: "segments", "aria-label": "Transcript by segment" }, ...items);
}
