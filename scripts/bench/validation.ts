/**
 * Body validation: a typical ~200-byte chat body checked by `validateBody`, per call. Far below 20 µs unless the
 * schemas were compiled per call.
 */
import { validateBody } from '@gateway/validation';
import { best, budget, check } from './measure.ts';

const body = JSON.parse(
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'What is the capital of France? One word.' },
    ],
    temperature: 0.7,
    max_tokens: 64,
    stream: false,
  }),
);

const size = JSON.stringify(body).length;
check(size >= 180 && size <= 230, `a typical chat body of about 200 bytes (got ${size})`);
const t = await best(3, 10_000, { validate: () => validateBody('chatComplete', body) });
budget('validateBody(chatComplete), per call', t.validate, 20);
