// The recall half of the API (docs/contract.md): the buckets, people, search, the edit of a
// filed item (a merge patch guarded by its ETag) and the export.
import { apiUrl, authHeaders, call, checkedFetch, type Bucket } from "./api";

/** One filed item, as the recall routes answer it. */
export interface FiledView {
  id: string; // the capture's id
  bucket: Bucket;
  title: string;
  text: string;
  source: "text" | "voice";
  createdAt: string;
  people: string[];
  dueDate: string | null; // YYYY-MM-DD
  done: boolean;
  nextAction: string | null;
  oneLiner: string | null;
  etag: string;
}

export interface BucketPage {
  bucket: Bucket;
  items: FiledView[];
  continuationToken: string | null;
}

export interface Person {
  name: string;
  mentions: number;
  lastMentionedAt: string;
  openItems: number;
}

export interface Found {
  id: string;
  bucket: Bucket | null;
  status: string;
  title: string;
  snippet: string;
  score: number;
  createdAt: string;
}

export type Edit = Partial<Pick<FiledView, "title" | "dueDate" | "nextAction" | "done">>;

export function getBucket(
  bucket: Bucket,
  continuationToken: string | null,
  filters: { done?: boolean } = {},
): Promise<BucketPage> {
  const query = new URLSearchParams({ limit: "20" });
  if (continuationToken) query.set("continuationToken", continuationToken);
  if (filters.done !== undefined) query.set("done", String(filters.done));
  return call("GET", `/buckets/${bucket.toLowerCase()}?${query}`);
}

export async function getPeople(): Promise<Person[]> {
  return (await call<{ people: Person[] }>("GET", "/people")).people;
}

export interface PersonPage {
  name: string;
  items: FiledView[];
  continuationToken: string | null;
}

export function getPerson(name: string, continuationToken: string | null = null): Promise<PersonPage> {
  const query = new URLSearchParams({ limit: "20" });
  if (continuationToken) query.set("continuationToken", continuationToken);
  return call("GET", `/people/${encodeURIComponent(name)}?${query}`);
}

export async function search(q: string): Promise<Found[]> {
  const query = new URLSearchParams({ q, limit: "30" });
  return (await call<{ items: Found[] }>("GET", `/search?${query}`)).items;
}

/** PATCH /api/captures/{id}: only what changed, If-Match the item's etag; a stale etag is
 * an ApiError 412. */
export function editFiled(item: Pick<FiledView, "id" | "etag">, edit: Edit): Promise<FiledView> {
  return call("PATCH", `/captures/${encodeURIComponent(item.id)}`, edit, {
    "Content-Type": "application/merge-patch+json",
    "If-Match": item.etag,
  });
}

/** GET /api/export: the zip, and its file name. The key is a header, so no plain link can
 * fetch it: the app downloads it and hands the browser the Blob. */
export async function exportAll(audio = false): Promise<{ blob: Blob; filename: string }> {
  // With the recordings: each beside its note, embedded in it (docs/contract.md, the export).
  const response = await checkedFetch(apiUrl(audio ? "/export?audio=true" : "/export"), { headers: authHeaders() });
  // Content-Disposition is readable only if the API exposes it (CORS); else today's name.
  const named = /filename="?([^";]+)"?/.exec(response.headers.get("Content-Disposition") ?? "");
  const today = new Date().toISOString().slice(0, 10);
  return { blob: await response.blob(), filename: named?.[1] ?? `second-brain-${today}.zip` };
}

/** One filed item, looked up in its bucket's pages (the API has no route for one alone); null
 * when it is not there (moved, deleted, or past the pages looked at). */
export async function findFiled(bucket: Bucket, id: string, pages = 5): Promise<FiledView | null> {
  let token: string | null = null;
  for (let n = 0; n < pages; n++) {
    const query = new URLSearchParams({ limit: "100" });
    if (token) query.set("continuationToken", token);
    const page: BucketPage = await call("GET", `/buckets/${bucket.toLowerCase()}?${query}`);
    const found = page.items.find((item) => item.id === id);
    if (found || !page.continuationToken) return found ?? null;
    token = page.continuationToken;
  }
  return null;
}
