/**
 * `default.containsCode` {format, not?}: passes when the judged text holds a fenced code block (```lang … ```, see
 * fences.ts) in the language `format`, or, with `not: true`, when it holds none. The fence's language tag is mapped
 * case-insensitively through common aliases (`py`, `python3` → Python; `ts`, `tsx` → TypeScript; `sh`, `bash` →
 * Shell …). Unfenced code is not detected. Missing text holds no code.
 */
import { Type } from '@sinclair/typebox';
import { defineCheck } from '../check.ts';
import { codeBlocks } from '../fences.ts';
import { judgedText } from '../text.ts';

export const CODE_FORMATS = {
  SQL: ['sql', 'mysql', 'postgresql', 'postgres', 'psql', 'pgsql', 'sqlite', 'plsql', 'tsql'],
  Python: ['py', 'python', 'python3', 'py3'],
  TypeScript: ['ts', 'typescript', 'tsx', 'mts', 'cts'],
  JavaScript: ['js', 'javascript', 'jsx', 'mjs', 'cjs', 'node'],
  Java: ['java'],
  'C#': ['cs', 'csharp', 'c#'],
  'C++': ['cpp', 'c++', 'cxx', 'cc', 'hpp'],
  C: ['c', 'h'],
  Ruby: ['rb', 'ruby'],
  PHP: ['php'],
  Swift: ['swift'],
  Kotlin: ['kt', 'kotlin', 'kts'],
  Go: ['go', 'golang'],
  Rust: ['rs', 'rust'],
  Scala: ['scala', 'sc'],
  R: ['r'],
  Perl: ['pl', 'perl'],
  Shell: ['sh', 'shell', 'bash', 'zsh', 'console', 'shellsession', 'ksh'],
  HTML: ['html', 'htm', 'xhtml'],
  CSS: ['css'],
  XML: ['xml'],
  JSON: ['json', 'jsonc', 'json5'],
  YAML: ['yml', 'yaml'],
  Markdown: ['md', 'markdown'],
  Dockerfile: ['dockerfile', 'docker', 'containerfile'],
} as const satisfies Record<string, readonly string[]>;

export type CodeFormat = keyof typeof CODE_FORMATS;

const FORMAT_OF = new Map<string, CodeFormat>();
for (const [format, tags] of Object.entries(CODE_FORMATS) as [CodeFormat, readonly string[]][])
  for (const tag of tags) FORMAT_OF.set(tag, format);

export const containsCode = defineCheck({
  name: 'containsCode',
  schema: Type.Object(
    {
      format: Type.Union((Object.keys(CODE_FORMATS) as CodeFormat[]).map((f) => Type.Literal(f))),
      not: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  run(ctx, p) {
    const { text, source } = judgedText(ctx);
    const not = p.not ?? false;
    const found = codeBlocks(text ?? '').map((b) => FORMAT_OF.get(b.lang.toLowerCase()) ?? (b.lang || 'unlabelled'));
    const present = found.includes(p.format);
    return {
      verdict: not ? !present : present,
      data: {
        source,
        textFound: text !== undefined,
        format: p.format,
        foundFormats: [...new Set(found)],
        not,
        explanation: present ? `Found a ${p.format} code block.` : `No ${p.format} code block found.`,
      },
    };
  },
});
