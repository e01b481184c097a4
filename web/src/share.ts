// The Android share target (manifest `share_target`, GET): "Share → Second brain" opens the
// app at ./?title=…&text=…&url=…; the capture screen opens with it, to check and send.

/** What was shared, as one capture's text; null when the address carries no share. */
export function sharedText(search: string): string | null {
  const query = new URLSearchParams(search);
  const parts: string[] = [];
  // Apps fill the three differently (a link often comes in text): each once.
  for (const name of ["title", "text", "url"]) {
    const value = query.get(name)?.trim();
    if (!value || parts.some((part) => part.includes(value))) continue;
    const within = parts.findIndex((part) => value.includes(part));
    if (within >= 0) parts[within] = value;
    else parts.push(value);
  }
  return parts.length ? parts.join("\n") : null;
}
