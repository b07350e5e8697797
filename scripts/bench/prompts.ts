/**
 * Prompts: what rendering a typical template costs once its version is compiled (the render and completions routes
 * do this per request): a system message with four variables, a section with a nested variable, an inverted section
 * and a partial, and a user message with a text part; the required-variable check, the render and the body with
 * saved parameters and root hyperparameters. Compiling a version (once per version and process) is printed apart.
 */
import { compilePrompt, type PromptDefinition } from '../../admin/prompts/src/definition.ts';
import { renderBody } from '../../admin/prompts/src/render.ts';
import { compile } from '../../admin/prompts/src/template.ts';
import { best, budget, check, figure } from './measure.ts';

/** What one render of a typical template may cost (µs); issue #18 asks for well under 50. */
const RENDER_US = 50;

const SYSTEM =
  'You are the support assistant of {{company}}. Answer in {{language}}, in at most {{max_words}} words.\n' +
  '{{#customer.vip}}{{customer.name}} is a VIP customer: offer a call back.{{/customer.vip}}' +
  '{{^customer.vip}}Point to the help centre for account questions.{{/customer.vip}}\n{{> signature}}';

const definition: PromptDefinition = {
  template: {
    kind: 'chat',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: [{ type: 'text', text: 'Ticket {{ticket_id}}: {{question}}' }] },
    ],
  },
  string: null,
  parameters: { model: 'gpt-4o-mini', temperature: 0.3, max_tokens: 400 },
  target: { virtual_key: 'bench' },
  metadata: null,
  tools: null,
  functions: null,
  tool_choice: null,
};
const signature = compile('-- {{agent}}, {{company}} support');
const partials = { texts: { signature: signature.source }, compiled: new Map([['signature', signature]]) };
const variables = {
  company: 'Acme & Co',
  language: 'English',
  max_words: 120,
  customer: { vip: true, name: 'Ann' },
  agent: 'Bo',
  ticket_id: 'T-1042',
  question: 'My invoice shows two charges for March; which one is right?',
};
const overrides = { temperature: 0.7, max_completion_tokens: 300 };

const compiled = compilePrompt(definition);
const body = renderBody(compiled, variables, overrides, partials);
const messages = body.messages as { content: unknown }[];
check(
  messages[0]?.content ===
    'You are the support assistant of Acme & Co. Answer in English, in at most 120 words.\nAnn is a VIP customer: offer a call back.\n-- Bo, Acme & Co support',
  'the template renders as expected',
);
check(body.temperature === 0.7 && body.max_completion_tokens === 300 && body.max_tokens === undefined, 'root hyperparameters apply');

const t = await best(5, 50_000, {
  render: () => renderBody(compiled, variables, overrides, partials),
  // A distinct source each time: the writer's cache would otherwise answer a repeated parse.
  parse: (i) => compile(`${SYSTEM} ${i}`),
});
budget('render a typical chat template (compiled version, with a partial)', t.render, RENDER_US);
figure('parse the system template, uncached (once per version and process)', t.parse);
