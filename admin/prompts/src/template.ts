/**
 * Mustache templates (the `mustache` package, 4.2): parsed once into tokens when a version is first used, then
 * rendered from the tokens. HTML escaping is off: a prompt is text sent to a model, and `&lt;` in a user's question
 * would change what the model reads (`{{x}}` and `{{{x}}}` render the same).
 *
 * Required variables: a variable tag (`{{x}}`, `{{{x}}}`, `{{&x}}`) that sits outside every section, in the template
 * or in a partial it includes outside every section. A section (`{{#x}}…{{/x}}`) or an inverted section
 * (`{{^x}}…{{/x}}`) is how a template says that something may be absent, so neither its name nor what is inside it
 * is required. A variable is missing when its (dotted) path does not resolve in `variables`; null counts as given.
 */
import Mustache from 'mustache';

/** A parsed template: its tokens, and what it needs of a render. */
export interface CompiledTemplate {
  readonly source: string;
  /** Mustache's tokens, typed as its renderTokens takes them. */
  readonly tokens: string[][];
  /** Variables referenced outside any section (dotted paths as written). */
  readonly required: readonly string[];
  /** Partials included outside any section: their own required variables become this template's. */
  readonly requiredPartials: readonly string[];
  /** Every partial named anywhere (they are looked up before a render). */
  readonly partials: readonly string[];
}

/**
 * One writer for every render: its cache holds the tokens of partial texts (parsed once per text), bounded so that a
 * deployment that publishes many partial versions does not grow without end.
 */
const writer = new Mustache.Writer();
const PARTIAL_CACHE_MAX = 2000;
{
  // Mustache's TemplateCache type says string; the writer stores token arrays in it.
  const cache = new Map<string, string>();
  (writer as unknown as { templateCache: Mustache.TemplateCache }).templateCache = {
    set(key: string, value: string) {
      if (cache.size >= PARTIAL_CACHE_MAX) cache.clear();
      cache.set(key, value);
    },
    get: (key: string) => cache.get(key),
    clear: () => cache.clear(),
  };
}

type Token = [string, string, number, number, Token[]?, number?, boolean?];

function walk(tokens: readonly Token[], depth: number, out: { required: Set<string>; requiredPartials: Set<string>; partials: Set<string> }): void {
  for (const token of tokens) {
    const [type, value] = token;
    if ((type === 'name' || type === '&') && depth === 0 && value !== '.') out.required.add(value);
    else if (type === '>') {
      out.partials.add(value);
      if (depth === 0) out.requiredPartials.add(value);
    } else if ((type === '#' || type === '^') && token[4]) walk(token[4], depth + 1, out);
  }
}

/** Parses a template; a syntax error (an unclosed section) throws Mustache's message. */
export function compile(source: string): CompiledTemplate {
  const tokens = writer.parse(source) as string[][];
  const out = { required: new Set<string>(), requiredPartials: new Set<string>(), partials: new Set<string>() };
  walk(tokens as unknown as Token[], 0, out);
  return { source, tokens, required: [...out.required], requiredPartials: [...out.requiredPartials], partials: [...out.partials] };
}

/** The template's syntax problem, or undefined when it parses. */
export function syntaxError(source: string): string | undefined {
  try {
    writer.parse(source);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const NO_ESCAPE: Mustache.RenderOptions = { escape: (value: unknown) => String(value) };

/** Renders compiled tokens; `partials` holds the text of every partial the template may include. */
export function render(template: CompiledTemplate, view: Mustache.Context, partials: Readonly<Record<string, string>>): string {
  return writer.renderTokens(template.tokens, view, partials, template.source, NO_ESCAPE);
}

/**
 * The variables as a render's view: a copy whose objects have no prototype, so that a tag reaches only what the
 * caller gave (`{{constructor}}` renders nothing) and required-variable checks read own properties only.
 */
export function viewOf(variables: Readonly<Record<string, unknown>>): Mustache.Context {
  return new Mustache.Context(plain(variables));
}

function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object') return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) out[key] = plain(item);
  return out;
}

/** Whether a dotted path resolves in the variables (own properties; null is a value). */
export function hasPath(variables: unknown, path: string): boolean {
  let node = variables;
  for (const part of path.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) return false;
    node = (node as Record<string, unknown>)[part];
  }
  return node !== undefined;
}
