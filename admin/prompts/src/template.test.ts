/**
 * Templates without a gateway: which variables are required (outside every section, partials included), what a
 * `string` template is, version references, the token-limit rule, and that a template reaches only the variables.
 */
import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { compilePrompt, type PromptDefinition, templateOfString, templateProblems } from './definition.ts';
import { missingVariables, NO_PARTIALS, type PartialTexts, renderBody } from './render.ts';
import { parseReference } from './store.ts';
import { compile } from './template.ts';

const chat = (content: string, parameters: PromptDefinition['parameters'] = {}): PromptDefinition => ({
  template: { kind: 'chat', messages: [{ role: 'user', content }] },
  string: null,
  parameters,
  target: { virtual_key: 'vk' },
  metadata: null,
  tools: null,
  functions: null,
  tool_choice: null,
});

const partials = (texts: Record<string, string>): PartialTexts => ({ texts, compiled: new Map(Object.entries(texts).map(([k, v]) => [k, compile(v)])) });

function error(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('required variables', () => {
  test('outside every section only; section names, inverted sections and what they hold are optional', () => {
    const t = compile('{{a}} {{{b}}} {{&c}} {{d.e}} {{#s}}{{inner}}{{#deeper}}{{x}}{{/deeper}}{{/s}}{{^n}}{{y}}{{/n}} {{! comment }} {{.}}');
    expect(t.required).toEqual(['a', 'b', 'c', 'd.e']);
  });

  test("a partial's top-level variables count when it is included outside any section, not inside one", () => {
    const prompt = compilePrompt(chat('{{> sig}} {{#more}}{{> extra}}{{/more}}'));
    const p = partials({ sig: '-- {{agent}}', extra: '{{note}}' });
    expect(missingVariables(prompt, p, {})).toEqual(['agent']);
    expect(missingVariables(prompt, p, { agent: 'A' })).toEqual([]);
  });

  test('a dotted path must resolve; null is a value; inherited properties are not', () => {
    const prompt = compilePrompt(chat('{{user.name}} {{constructor}}'));
    expect(missingVariables(prompt, NO_PARTIALS, { user: {} })).toEqual(['user.name', 'constructor']);
    expect(missingVariables(prompt, NO_PARTIALS, { user: { name: null }, constructor: 'c' })).toEqual([]);
  });

  test('the 400 names every missing variable and points at the first', () => {
    const e = error(() => renderBody(compilePrompt(chat('{{a}} {{b}}')), {}, {}));
    expect({ status: e.status, param: e.param }).toEqual({ status: 400, param: 'variables.a' });
    expect(e.message).toContain('a, b');
  });
});

describe('rendering', () => {
  test('no HTML escaping; sections over lists; the view holds only the variables', () => {
    const body = renderBody(compilePrompt(chat('{{x}}|{{{x}}}|{{#items}}<{{.}}>{{/items}}|{{#toString}}bad{{/toString}}')), { x: '<&"\'>', items: ['a', 'b'] }, {});
    expect((body.messages as { content: string }[])[0]?.content).toBe(`<&"'>|<&"'>|<a><b>|`);
  });

  test('partials may recurse over their data; recursion without end is a 400', () => {
    // Mustache looks a name up in the enclosing contexts too: a leaf says `children: []`, or it would take its parent's.
    const tree = partials({ node: '{{name}}({{#children}}{{> node}}{{/children}})' });
    const prompt = compilePrompt(chat('{{> node}}'));
    const body = renderBody(prompt, { name: 'a', children: [{ name: 'b', children: [{ name: 'c', children: [] }] }] }, {}, tree);
    expect((body.messages as { content: string }[])[0]?.content).toBe('a(b(c()))');
    const loop = partials({ again: 'x{{> again}}' });
    expect(error(() => renderBody(compilePrompt(chat('{{> again}}')), {}, {}, loop)).status).toBe(400);
  });

  test('token limits: root max_completion_tokens, root max_tokens, saved max_completion_tokens, saved max_tokens, first wins', () => {
    const saved = compilePrompt(chat('hi', { model: 'm', max_tokens: 10, max_completion_tokens: 20 }));
    const limits = (overrides: Record<string, number>): unknown[] => {
      const b = renderBody(saved, {}, overrides);
      return [b.max_completion_tokens, b.max_tokens];
    };
    expect(limits({})).toEqual([20, undefined]);
    expect(limits({ max_tokens: 5 })).toEqual([undefined, 5]);
    expect(limits({ max_tokens: 5, max_completion_tokens: 6 })).toEqual([6, undefined]);
    const text = compilePrompt({ ...chat(''), template: { kind: 'text', text: 'go' }, parameters: { max_completion_tokens: 7 } });
    expect(renderBody(text, {}, {})).toEqual({ max_tokens: 7, prompt: 'go' });
  });
});

describe('what a template is', () => {
  test('string: a JSON array of messages is chat (variables never break its JSON), anything else text', () => {
    expect(templateOfString('[{"role":"user","content":"Hi {{name}}"}]')).toEqual({ kind: 'chat', messages: [{ role: 'user', content: 'Hi {{name}}' }] });
    expect(templateOfString('[draft] Hi {{name}}')).toEqual({ kind: 'text', text: '[draft] Hi {{name}}' });
    expect(templateOfString('[1, 2]')).toEqual({ kind: 'text', text: '[1, 2]' });
    const prompt = compilePrompt({ ...chat(''), template: templateOfString('[{"role":"user","content":"Hi {{name}}"}]') });
    expect(renderBody(prompt, { name: 'a "quoted" name' }, {}).messages).toEqual([{ role: 'user', content: 'Hi a "quoted" name' }]);
  });

  test('problems: unclosed sections and partial names that are no slug, by path', () => {
    expect(templateProblems({ kind: 'chat', messages: [{ role: 'user', content: [{ type: 'text', text: '{{#a}}' }] }, { role: '', content: '{{> Bad Name}}' }] }, (n) => /^[a-z0-9-]+$/.test(n))).toEqual([
      'messages[0].content[0].text: not a valid Mustache template (Unclosed section "a" at 6)',
      'messages[1].role: must be a non-empty string',
      'messages[1].content: {{> Bad Name}} does not name a partial slug',
    ]);
  });
});

describe('references', () => {
  test('@latest, @<n>, none; an encoded @; a bad suffix is a 400', () => {
    expect(parseReference('bot')).toEqual({ ref: 'bot', choice: 'published' });
    expect(parseReference('bot@latest')).toEqual({ ref: 'bot', choice: 'latest' });
    expect(parseReference('bot@12')).toEqual({ ref: 'bot', choice: 12 });
    expect(parseReference('bot%4012')).toEqual({ ref: 'bot', choice: 12 });
    for (const bad of ['bot@0', 'bot@x', 'bot@1.5', 'bot@'])
      expect(error(() => parseReference(bad)).status).toBe(400);
  });
});
