/**
 * A version rendered into the request body it stands for: the templates filled from `variables`, the saved
 * parameters, tools and functions, then the hyperparameters given at the body root over them.
 *
 * Token limits: `max_completion_tokens` is preferred and `max_tokens` accepted. The first of root
 * `max_completion_tokens`, root `max_tokens`, saved `max_completion_tokens`, saved `max_tokens` wins and is sent under
 * its own name; the other is dropped, so a body never carries two limits. A text completion has only `max_tokens`.
 */
import { Errors, type Json, type JsonObject } from '@gateway/sdk';
import type { CompiledContent, CompiledPrompt } from './definition.ts';
import { type CompiledTemplate, hasPath, render, viewOf } from './template.ts';

/** The partials a render may include, by the name templates use: their text and their compiled form. */
export interface PartialTexts {
  readonly texts: Readonly<Record<string, string>>;
  readonly compiled: ReadonlyMap<string, CompiledTemplate>;
}

export const NO_PARTIALS: PartialTexts = { texts: {}, compiled: new Map() };

/** Fields of the body root that the template makes: they cannot be given as hyperparameters. */
const TEMPLATE_FIELDS = ['messages', 'prompt'] as const;

/** The required variables (template.ts) that `variables` lacks, in the order the templates name them. */
export function missingVariables(prompt: CompiledPrompt, partials: PartialTexts, variables: Readonly<Record<string, unknown>>): string[] {
  const missing = new Set<string>();
  const seen = new Set<string>();
  const visit = (template: CompiledTemplate) => {
    for (const name of template.required) if (!hasPath(variables, name)) missing.add(name);
    for (const name of template.requiredPartials) {
      if (seen.has(name)) continue;
      seen.add(name);
      const partial = partials.compiled.get(name);
      if (partial) visit(partial);
    }
  };
  for (const template of prompt.templates) visit(template);
  return [...missing];
}

function renderContent(content: CompiledContent, view: ReturnType<typeof viewOf>, partials: PartialTexts): Json | undefined {
  if (content.kind === 'template') return render(content.template, view, partials.texts);
  if (content.kind === 'fixed') return content.value;
  return content.parts.map((part) => (part.kind === 'fixed' ? part.value : { ...part.part, text: render(part.text, view, partials.texts) }));
}

/** Picks the token limit as the header comment says. */
function tokenLimit(body: JsonObject, overrides: JsonObject, base: JsonObject, chat: boolean): void {
  delete body.max_tokens;
  delete body.max_completion_tokens;
  const order: [JsonObject, 'max_completion_tokens' | 'max_tokens'][] = [
    [overrides, 'max_completion_tokens'],
    [overrides, 'max_tokens'],
    [base, 'max_completion_tokens'],
    [base, 'max_tokens'],
  ];
  for (const [source, key] of order) {
    const value = source[key];
    if (value === undefined) continue;
    body[chat ? key : 'max_tokens'] = value;
    return;
  }
}

/**
 * The request body for `/chat/completions` (chat) or `/completions` (text); 400 naming every missing required
 * variable, or a template field given as a hyperparameter.
 */
export function renderBody(prompt: CompiledPrompt, variables: Readonly<Record<string, unknown>>, overrides: JsonObject, partials: PartialTexts = NO_PARTIALS): JsonObject {
  for (const field of TEMPLATE_FIELDS)
    if (overrides[field] !== undefined) throw Errors.badRequest(`${field} comes from the prompt's template; pass values in variables`, field);
  const missing = missingVariables(prompt, partials, variables);
  if (missing.length > 0)
    throw Errors.badRequest(
      `Missing required variable${missing.length > 1 ? 's' : ''}: ${missing.join(', ')} (used outside any section of the template)`,
      `variables.${missing[0]}`,
    );
  try {
    return assemble(prompt, variables, overrides, partials);
  } catch (error) {
    // Partials may include each other (a tree walked by its data); without data to end it, the recursion never does.
    if (error instanceof RangeError) throw Errors.badRequest('The template\'s partials include each other without end for these variables', 'variables');
    throw error;
  }
}

function assemble(prompt: CompiledPrompt, variables: Readonly<Record<string, unknown>>, overrides: JsonObject, partials: PartialTexts): JsonObject {
  const view = viewOf(variables);
  const body: JsonObject = { ...prompt.base, ...overrides };
  const chat = prompt.kind === 'chat';
  tokenLimit(body, overrides, prompt.base, chat);
  if (chat) {
    body.messages = prompt.messages.map((message) => {
      const out: JsonObject = { ...message.fields };
      const content = renderContent(message.content, view, partials);
      if (content !== undefined) out.content = content;
      return out;
    });
  } else if (prompt.text) {
    body.prompt = render(prompt.text, view, partials.texts);
  }
  return body;
}
