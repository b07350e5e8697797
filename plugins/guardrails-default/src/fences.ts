/**
 * Fenced code blocks in Markdown text, CommonMark style: a line indented at most three spaces opening with three or
 * more backticks or tildes, an optional info string whose first word is the language, closed by a line with a fence
 * of the same character at least as long (an unclosed block runs to the end of the text). One linear pass over lines.
 */
export interface CodeBlock {
  /** The info string's first word as written (`py`, `TypeScript`), '' when none. */
  lang: string;
  code: string;
}

const OPEN = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;

export function codeBlocks(text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  let open: { fence: string; lang: string; lines: string[] } | undefined;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (open) {
      const trimmed = line.trimStart();
      const indent = line.length - trimmed.length;
      const char = open.fence[0] as string;
      let n = 0;
      while (n < trimmed.length && trimmed[n] === char) n++;
      if (indent <= 3 && n >= open.fence.length && trimmed.slice(n).trim() === '') {
        blocks.push({ lang: open.lang, code: open.lines.join('\n') });
        open = undefined;
      } else open.lines.push(line);
      continue;
    }
    const m = OPEN.exec(line);
    if (m) open = { fence: m[1] as string, lang: m[2] as string, lines: [] };
  }
  if (open) blocks.push({ lang: open.lang, code: open.lines.join('\n') });
  return blocks;
}
