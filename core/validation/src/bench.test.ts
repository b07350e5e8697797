import { expect, test } from 'bun:test';
import { validateBody } from './index.ts';

/** A typical small chat request, about 200 bytes of JSON. */
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

test('validating a typical chat body stays far below 20 µs (catches per-call compilation)', () => {
  expect(JSON.stringify(body).length).toBeWithin(180, 230);
  for (let i = 0; i < 2000; i++) validateBody('chatComplete', body);
  const runs = 10_000;
  const start = Bun.nanoseconds();
  for (let i = 0; i < runs; i++) validateBody('chatComplete', body);
  const averageMicros = (Bun.nanoseconds() - start) / runs / 1000;
  console.log(`validateBody(chatComplete): ${averageMicros.toFixed(3)} µs per call`);
  expect(averageMicros).toBeLessThan(20);
});
