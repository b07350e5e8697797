/**
 * The `data:` payloads of a text SSE stream fed piece by piece, for the translators that turn a chat completions
 * stream into another API's events (messages/stream.ts, responses/stream.ts). Lines may be cut anywhere between
 * pieces; `\r\n` endings are accepted; a blank line ends an event and its `data:` lines (joined with `\n`) go to
 * `onEvent`, whose returned text is what `push` returns. Other fields (`event:`, comments) are ignored: chat
 * completions streams carry everything in `data:`. The callback is given once, so a piece costs no allocation
 * beyond the line split itself.
 */
export class SseDataEvents {
  private partial = '';
  private data: string[] = [];

  constructor(private readonly onEvent: (payload: string) => string) {}

  /** The text `onEvent` produced for the events this piece completed. */
  push(text: string): string {
    const all = this.partial + text;
    const nl = all.lastIndexOf('\n');
    if (nl < 0) {
      this.partial = all;
      return '';
    }
    this.partial = all.slice(nl + 1);
    let out = '';
    for (let line of all.slice(0, nl).split('\n')) {
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') out += this.endEvent();
      else if (line.startsWith('data:')) this.data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
    }
    return out;
  }

  /** Ends the stream: a last line or event without its blank line is still delivered. */
  end(): string {
    return this.push('\n\n');
  }

  private endEvent(): string {
    if (!this.data.length) return '';
    const payload = this.data.join('\n');
    this.data = [];
    return this.onEvent(payload);
  }
}
