// The official AG-UI client (@ag-ui/client) against our API, as any AG-UI app would drive it.
// Usage: node scenario.mjs <name>   with BASE_URL and API_KEY in the environment.
// Prints one JSON object: what the client saw (pendingInterrupts, results, errors, events).
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const base = process.env.BASE_URL;
const headers = { "X-API-Key": process.env.API_KEY };

// A voice note's events feed is a GET: the same agent, reading the run from another verb.
class FeedAgent extends HttpAgent {
  requestInit() {
    return { method: "GET", headers: { ...headers, Accept: "text/event-stream" } };
  }
}

function agent(threadId, text) {
  const initialMessages = text ? [{ id: `m-${threadId}`, role: "user", content: text }] : [];
  return new HttpAgent({ url: `${base}/api/capture`, headers, threadId, initialMessages });
}

// Runs the agent and records what a UI would look at.
async function run(a, params = {}, extra = {}) {
  const seen = { events: [], errors: [], steps: [] };
  const subscriber = {
    onEvent: ({ event }) => {
      seen.events.push(event.type);
      if (event.type === "STEP_STARTED") seen.steps.push(event.stepName);
    },
    onRunStartedEvent: ({ event }) => {
      seen.protocolVersion = event.protocolVersion;
    },
    onRunFinishedEvent: ({ event }) => {
      seen.result = event.result ?? null;
      seen.outcome = event.outcome ?? null;
    },
    onRunErrorEvent: ({ event }) => {
      seen.errors.push(event.code);
    },
    ...extra,
  };
  try {
    await a.runAgent(params, subscriber);
  } catch (error) {
    seen.thrown = `${error.name}: ${error.message}`;
  }
  seen.pending = a.pendingInterrupts.map((i) => ({
    id: i.id,
    reason: i.reason,
    metadata: i.metadata,
    responseSchema: i.responseSchema,
  }));
  seen.messages = a.messages.length;
  seen.state = a.state && a.state.status ? { status: a.state.status, id: a.state.id } : null;
  return seen;
}

function answering(a, payload) {
  const responses = Object.fromEntries(a.pendingInterrupts.map((i) => [i.id, payload]));
  return buildResumeArray(a.pendingInterrupts, responses);
}

// A user message that is a voice note: one audio part (AG-UI 1.0 multimodal input).
function speaking(threadId, part) {
  const initialMessages = [{ id: `m-${threadId}`, role: "user", content: [part] }];
  return new HttpAgent({ url: `${base}/api/capture`, headers, threadId, initialMessages });
}

async function audioBase64() {
  const fs = await import("node:fs/promises");
  return (await fs.readFile(process.env.AUDIO)).toString("base64");
}

const scenarios = {
  // Unclear text: the run asks; the answer, built by the client, files it. SAID and ANSWER
  // (environment) replace the capture and the answer.
  async answer() {
    const a = agent(`t-answer-${Date.now()}`, process.env.SAID ?? "zq tiles");
    const asked = await run(a);
    const answer = process.env.ANSWER ?? "order the kitchen tiles";
    const resume = answering(a, { status: "resolved", payload: { answer } });
    const filed = await run(a, { resume });
    return { asked, filed, resume };
  },
  // Low confidence: the user types in the box instead of pressing a bucket's button.
  async typed() {
    const a = agent(`t-typed-${Date.now()}`, "tiles for the kitchen");
    const asked = await run(a);
    const payload = { answer: process.env.ANSWER };
    const filed = await run(a, { resume: answering(a, { status: "resolved", payload }) });
    return { asked, filed };
  },
  // Low confidence: the user picks the bucket.
  async pick() {
    const a = agent(`t-pick-${Date.now()}`, "tiles for the kitchen");
    const asked = await run(a);
    const filed = await run(a, { resume: answering(a, { status: "resolved", payload: { bucket: "Admin" } }) });
    return { asked, filed };
  },
  async cancel() {
    const a = agent(`t-cancel-${Date.now()}`, "tiles for the kitchen");
    const asked = await run(a);
    const cancelled = await run(a, { resume: answering(a, { status: "cancelled" }) });
    return { asked, cancelled };
  },
  // New input while a question is open: the client's own guard, then the server's.
  async refused() {
    const threadId = `t-refused-${Date.now()}`;
    const a = agent(threadId, "zq tiles");
    const asked = await run(a);
    a.addMessage({ id: "m-more", role: "user", content: "something else" });
    const sameAgent = await run(a);
    const other = agent(threadId, "something else");
    const otherAgent = await run(other);
    return { asked, sameAgent, otherAgent };
  },
  // The same resume twice (a retry from another device): the same answer, filed once.
  async replay() {
    const threadId = `t-replay-${Date.now()}`;
    const a = agent(threadId, "zq tiles");
    await run(a);
    const resume = answering(a, { status: "resolved", payload: { answer: "order the kitchen tiles" } });
    const first = await run(a, { resume });
    const again = await run(agent(threadId, null), { resume });
    return { first, again };
  },
  // A voice note inline, as base64 data: transcribed, classified and told in one run.
  async audio() {
    const value = await audioBase64();
    const a = speaking(`t-audio-${Date.now()}`, { type: "audio", source: { type: "data", value, mimeType: "audio/wav" } });
    return await run(a);
  },
  // The same as the deprecated binary part, which the client upgrades or we do.
  async binary() {
    const data = await audioBase64();
    const a = speaking(`t-binary-${Date.now()}`, { type: "binary", mimeType: "audio/wav", data });
    return await run(a);
  },
  // A note uploaded through POST /api/voice-notes, named by its Location in an audio part.
  async audioUrl() {
    const threadId = `t-url-${Date.now()}`;
    const answer = await fetch(`${base}/api/voice-notes`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ contentType: "audio/wav", threadId }),
    });
    const started = await answer.json();
    const fs = await import("node:fs/promises");
    const put = await fetch(started.uploadUrl, {
      method: "PUT",
      headers: started.uploadHeaders,
      body: await fs.readFile(process.env.AUDIO),
    });
    const url = answer.headers.get("location");
    const a = speaking(threadId, { type: "audio", source: { type: "url", value: url } });
    return { captureId: started.captureId, uploaded: put.status, seen: await run(a) };
  },
  // A voice note: follow its feed to the question, answer it on its thread.
  async voice() {
    const started = await fetch(`${base}/api/voice-notes`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ contentType: "audio/wav" }),
    }).then((r) => r.json());
    const audio = await import("node:fs/promises").then((fs) => fs.readFile(process.env.AUDIO));
    const put = await fetch(started.uploadUrl, { method: "PUT", headers: started.uploadHeaders, body: audio });
    const feed = new FeedAgent({
      url: `${base}${started.eventsUrl}?protocolVersion=1.0`,
      headers,
      threadId: started.captureId,
    });
    const asked = await run(feed);
    const a = agent(started.captureId, null);
    a.setMessages(feed.messages);
    const resume = buildResumeArray(feed.pendingInterrupts, {
      [feed.pendingInterrupts[0]?.id]: { status: "resolved", payload: { bucket: "People" } },
    });
    const filed = await run(a, { resume });
    return { captureId: started.captureId, uploaded: put.status, asked, filed };
  },
  // Ask, then a follow-up on the same agent (same threadId, the conversation it holds):
  // QUESTION and FOLLOW_UP (environment) are what is asked.
  async ask() {
    const threadId = `t-ask-${Date.now()}`;
    const a = new HttpAgent({
      url: `${base}/api/ask`,
      headers,
      threadId,
      initialMessages: [{ id: "q1", role: "user", content: process.env.QUESTION }],
    });
    const tools = [];
    const watching = {
      onToolCallEndEvent: ({ toolCallName, toolCallArgs }) => tools.push({ name: toolCallName, args: toolCallArgs }),
    };
    const first = await run(a, {}, watching);
    a.addMessage({ id: "q2", role: "user", content: process.env.FOLLOW_UP });
    const second = await run(a, {}, watching);
    const said = a.messages
      .filter((m) => m.role === "assistant" && typeof m.content === "string" && m.content)
      .map((m) => ({ content: m.content, citations: m.metadata?.citations ?? null }));
    const toolResults = a.messages.filter((m) => m.role === "tool").length;
    return { first, second, tools, said, toolResults, threadId: a.threadId };
  },
};

const name = process.argv[2];
const outcome = await scenarios[name]();
process.stdout.write(JSON.stringify(outcome));
