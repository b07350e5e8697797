// The local OpenAI server as a process of its own, for latency scripts (scripts/feature-latency.sh):
// `MOCK_PORT=<port> bun tests/mocks/openai-server-main.ts`. Any bearer key is accepted; requests are not kept.
import { startOpenAIMock } from './openai-server.ts';

const mock = await startOpenAIMock({ apiKey: null, port: Number(process.env.MOCK_PORT ?? 0) });
// A latency run sends hundreds of thousands of requests: the record of them is dropped as it grows.
setInterval(() => (mock.requests.length = 0), 1000).unref?.();
console.log(`local OpenAI server on ${mock.url}`);
