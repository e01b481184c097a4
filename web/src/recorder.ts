// Recording a voice note with MediaRecorder: webm/opus where the browser has it (Chromium,
// Firefox), mp4/AAC on Safari; every one of them is a type the API takes.

/** The API's default MAX_VOICE_SECONDS: a longer note would fail with AUDIO_TOO_LONG, so the
 * recorder stops there and shows the limit while recording. */
export const VOICE_LIMIT_S = 600;

const TYPES = ["audio/webm;codecs=opus", "audio/mp4", "audio/ogg;codecs=opus", "audio/webm"];

export interface Recorded {
  audio: Blob;
  contentType: string; // without parameters, as POST /api/voice-notes takes it
  seconds: number;
}

export function canRecord(): boolean {
  return typeof MediaRecorder !== "undefined" && !!navigator.mediaDevices?.getUserMedia;
}

export class Recording {
  private chunks: Blob[] = [];
  private started = performance.now();
  private timer = 0;
  private done: Promise<Blob>;

  private constructor(
    private stream: MediaStream,
    private recorder: MediaRecorder,
    onTick: (seconds: number) => void,
    onLimit: () => void,
  ) {
    recorder.addEventListener("dataavailable", (e) => e.data.size && this.chunks.push(e.data));
    this.done = new Promise((resolve) =>
      recorder.addEventListener("stop", () => resolve(new Blob(this.chunks, { type: recorder.mimeType }))),
    );
    recorder.start();
    this.timer = window.setInterval(() => {
      const seconds = this.seconds();
      onTick(seconds);
      if (seconds >= VOICE_LIMIT_S) onLimit();
    }, 250);
  }

  static async start(onTick: (seconds: number) => void, onLimit: () => void): Promise<Recording> {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const mimeType = TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    return new Recording(stream, new MediaRecorder(stream, mimeType ? { mimeType } : {}), onTick, onLimit);
  }

  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  async stop(): Promise<Recorded> {
    const seconds = Math.min(this.seconds(), VOICE_LIMIT_S);
    this.finish();
    const audio = await this.done;
    const contentType = (audio.type || "audio/webm").split(";")[0].trim().toLowerCase();
    return { audio, contentType, seconds };
  }

  cancel(): void {
    this.finish();
  }

  private finish(): void {
    window.clearInterval(this.timer);
    if (this.recorder.state !== "inactive") this.recorder.stop();
    // Releasing the tracks turns the browser's "microphone in use" indicator off.
    this.stream.getTracks().forEach((track) => track.stop());
  }
}

export function clock(seconds: number): string {
  const s = Math.floor(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
