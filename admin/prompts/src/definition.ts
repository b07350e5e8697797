/**
 * A prompt version as stored (`prompt_versions.definition`) and as compiled for rendering. The template is chat
 * messages (each content, and each text part of a content array, a Mustache template) or one text (a text
 * completion's `prompt`). `string` as a client sends it is either: a JSON array of messages is a chat template (its
 * contents parsed as templates after the JSON is read, so a variable's quotes never break the JSON), any other text
 * a text template.
 */
import type { Json, JsonObject } from '@gateway/sdk';
import { type CompiledTemplate, compile, syntaxError } from './template.ts';

export type PromptTemplate = { kind: 'chat'; messages: JsonObject[] } | { kind: 'text'; text: string };

/** Which stored object a prompt calls: exactly one of these. */
export type PromptTarget = { virtual_key: string } | { provider: string } | { config: string };

export interface PromptDefinition {
  template: PromptTemplate;
  /** The `string` the client sent, when it sent one (shown back as given). */
  string: string | null;
  /** Model and hyperparameters (`model` lives here). */
  parameters: JsonObject;
  target: PromptTarget;
  metadata: JsonObject | null;
  tools: Json | null;
  functions: Json | null;
  tool_choice: Json | null;
}

/** `string` as a template: a JSON array of `{role, …}` objects is chat, anything else is text. */
export function templateOfString(value: string): PromptTemplate {
  const trimmed = value.trimStart();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((m) => m !== null && typeof m === 'object' && !Array.isArray(m) && typeof (m as Record<string, unknown>).role === 'string'))
        return { kind: 'chat', messages: parsed as JsonObject[] };
    } catch {
      // not JSON: a text template that starts with a bracket
    }
  }
  return { kind: 'text', text: value };
}

/** Every problem of a template (`path: reason`), empty when it can be compiled. */
export function templateProblems(template: PromptTemplate, partialSlugOk: (name: string) => boolean = () => true): string[] {
  const problems: string[] = [];
  const check = (source: string, path: string) => {
    const error = syntaxError(source);
    if (error) problems.push(`${path}: not a valid Mustache template (${error})`);
    else for (const name of compile(source).partials) if (!partialSlugOk(name)) problems.push(`${path}: {{> ${name}}} does not name a partial slug`);
  };
  if (template.kind === 'text') {
    check(template.text, 'string');
    return problems;
  }
  if (template.messages.length === 0) problems.push('messages: at least one message');
  template.messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    if (typeof message.role !== 'string' || message.role === '') problems.push(`${path}.role: must be a non-empty string`);
    const content = message.content;
    if (typeof content === 'string') check(content, `${path}.content`);
    else if (Array.isArray(content))
      content.forEach((part, j) => {
        if (part === null || typeof part !== 'object' || Array.isArray(part)) problems.push(`${path}.content[${j}]: must be an object`);
        else if (part.type === 'text') {
          if (typeof part.text === 'string') check(part.text, `${path}.content[${j}].text`);
          else problems.push(`${path}.content[${j}].text: must be a string`);
        }
      });
    else if (content !== null && content !== undefined) problems.push(`${path}.content: must be a string, an array of parts, or null`);
  });
  return problems;
}

/** A message's content compiled: one template, parts (text parts compiled), or a value that is no template. */
export type CompiledContent =
  | { readonly kind: 'template'; readonly template: CompiledTemplate }
  | { readonly kind: 'parts'; readonly parts: readonly CompiledPart[] }
  | { readonly kind: 'fixed'; readonly value: Json | undefined };

/** A content part: a text part (its `text` a template, its other fields kept) or any other part, as it is. */
export type CompiledPart = { readonly kind: 'text'; readonly part: JsonObject; readonly text: CompiledTemplate } | { readonly kind: 'fixed'; readonly value: Json };

/** A message: its fields other than content as they are. */
export interface CompiledMessage {
  readonly fields: JsonObject;
  readonly content: CompiledContent;
}

export interface CompiledPrompt {
  readonly kind: 'chat' | 'text';
  readonly messages: readonly CompiledMessage[];
  readonly text: CompiledTemplate | undefined;
  /** Every template of the version, in order (for the variables and partials they need). */
  readonly templates: readonly CompiledTemplate[];
  /** The request body's fields other than the template: parameters (model included), tools, functions, tool_choice. */
  readonly base: JsonObject;
}

export function compilePrompt(definition: PromptDefinition): CompiledPrompt {
  const templates: CompiledTemplate[] = [];
  const add = (source: string) => {
    const compiled = compile(source);
    templates.push(compiled);
    return compiled;
  };
  const base: JsonObject = { ...definition.parameters };
  if (definition.tools !== null) base.tools = definition.tools;
  if (definition.functions !== null) base.functions = definition.functions;
  if (definition.tool_choice !== null) base.tool_choice = definition.tool_choice;
  const template = definition.template;
  if (template.kind === 'text') return { kind: 'text', messages: [], text: add(template.text), templates, base };
  const messages = template.messages.map((message): CompiledMessage => {
    const { content, ...fields } = message;
    if (typeof content === 'string') return { fields, content: { kind: 'template', template: add(content) } };
    if (Array.isArray(content))
      return {
        fields,
        content: {
          kind: 'parts',
          parts: content.map((part): CompiledPart => {
            if (part !== null && typeof part === 'object' && !Array.isArray(part) && part.type === 'text' && typeof part.text === 'string')
              return { kind: 'text', part, text: add(part.text) };
            return { kind: 'fixed', value: part };
          }),
        },
      };
    return { fields, content: { kind: 'fixed', value: content } };
  });
  return { kind: 'chat', messages, text: undefined, templates, base };
}
