// Every run goes through the official AG-UI client: an HttpAgent POSTs /api/capture (a capture,
// or the resume that answers its question); FeedAgent reads a capture's events feed with GET.
import { HttpAgent, type AgentSubscriber, type Interrupt, type Message, type RunAgentParameters } from "@ag-ui/client";
import { apiUrl, authHeaders, checkedFetch, hostUrl } from "./api";

/** The result of RUN_FINISHED (docs/contract.md): the capture's status and outcome. */
export interface RunResult {
  status?: string;
  outcome?: string;
  inboxItemId?: string;
  bucket?: string;
  confidence?: number;
  title?: string;
  questionText?: string;
}

export type RunEnd =
  | { kind: "finished"; result: RunResult; interrupts: Interrupt[]; state: Record<string, unknown> }
  | { kind: "error"; code?: string; message: string } // RUN_ERROR
  | { kind: "failed"; error: unknown }; // the request itself failed (network, 401, …)

export interface Progress {
  step(name: string, done: boolean): void;
}

/** A voice note's (or a queued capture's) events feed is a GET: the same agent, reading the
 * run from another verb. */
export class FeedAgent extends HttpAgent {
  protected requestInit(): RequestInit {
    return {
      method: "GET",
      headers: { ...this.headers, Accept: "text/event-stream" },
      signal: this.abortController.signal,
    };
  }
}

export function captureAgent(
  threadId: string,
  messages: Message[],
  headers: Record<string, string> = {},
): HttpAgent {
  return new HttpAgent({
    url: apiUrl("/capture"),
    headers: { ...authHeaders(), ...headers },
    threadId,
    initialMessages: messages,
    fetch: checkedFetch,
  });
}

/** The feed, declaring AG-UI 1.0 so that a question ends it as an interrupt. */
export function feedAgent(captureId: string, threadId: string): FeedAgent {
  const path = `/api/captures/${encodeURIComponent(captureId)}/events?protocolVersion=1.0`;
  return new FeedAgent({ url: hostUrl(path), headers: authHeaders(), threadId, fetch: checkedFetch });
}

/** Runs the agent once and says how the run ended; progress is reported as it streams. */
export async function run(
  agent: HttpAgent,
  parameters: RunAgentParameters,
  progress: Progress,
): Promise<RunEnd> {
  let end: RunEnd | undefined;
  const subscriber: AgentSubscriber = {
    onStepStartedEvent: ({ event }) => progress.step(event.stepName, false),
    onStepFinishedEvent: ({ event }) => progress.step(event.stepName, true),
    onRunFinishedEvent: (params) => {
      const result = (params.event.result ?? {}) as RunResult;
      const interrupts = params.outcome === "interrupt" ? params.interrupts : [];
      end = { kind: "finished", result, interrupts, state: {} };
    },
    onRunErrorEvent: ({ event }) => {
      end = { kind: "error", code: event.code, message: event.message };
    },
  };
  try {
    await agent.runAgent(parameters, subscriber);
  } catch (error) {
    // The request failed (our checkedFetch's NetworkError or ApiError), or the stream broke.
    end = { kind: "failed", error };
  }
  if (end?.kind === "finished") end.state = (agent.state ?? {}) as Record<string, unknown>;
  return end ?? { kind: "error", message: "The run ended without an outcome." };
}

/** The ask agent: POST /api/ask, one agent a conversation, so that a follow-up carries the
 * messages before it (and the same threadId). */
export function askAgent(threadId: string, messages: Message[] = []): HttpAgent {
  return new HttpAgent({
    url: apiUrl("/ask"),
    headers: authHeaders(),
    threadId,
    initialMessages: messages,
    fetch: checkedFetch,
  });
}
