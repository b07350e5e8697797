import { describe, expect, test } from 'bun:test';
import type { GatewayRequest, JsonObject } from '@gateway/sdk';
import { buildGatewayRequest } from '@gateway/sdk/testing';
import { matches, type Query, requestGetter } from './query.ts';

const body: JsonObject = {
  model: 'gpt-4o-mini',
  temperature: 0.7,
  max_tokens: 512,
  stream: true,
  user: 'alice',
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hello' },
  ],
  response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true } },
  metadata: { 'a.b': 'dotted' },
  tools: [],
  nothing: null,
};

function req(metadata: Record<string, string> = { tier: 'pro', region: 'eu', count: '7' }, path = '/chat/completions'): GatewayRequest {
  return buildGatewayRequest({ path, body, rawBody: undefined, parsedBody: undefined, metadata, receivedAt: 0 });
}

const get = requestGetter(req());
const m = (query: Query, getter = get) => matches(query, getter);

describe('requestGetter', () => {
  test('metadata.<key>, params.<path> at any depth, url.pathname', () => {
    expect(get('metadata.tier')).toBe('pro');
    expect(get('metadata.missing')).toBeUndefined();
    expect(get('params.model')).toBe('gpt-4o-mini');
    expect(get('params.messages[1].content')).toBe('hello');
    expect(get('params.response_format.json_schema.strict')).toBe(true);
    expect(get('params.metadata["a.b"]')).toBe('dotted');
    expect(get('params.nothing')).toBeNull();
    expect(get('params.messages[5].content')).toBeUndefined();
    expect(get('params.messages[*].content')).toBeUndefined();
    expect(get('params.model.length')).toBeUndefined(); // own properties only
    expect(get('url.pathname')).toBe('/v1/chat/completions');
    expect(requestGetter(req({}, '/embeddings'))('url.pathname')).toBe('/v1/embeddings');
  });

  test('metadata.<key> reads the request metadata own keys only, never Object.prototype members', () => {
    // Without an x-gateway-metadata header the server hands the pipeline a plain frozen `{}` (EMPTY_METADATA in
    // core/server/src/gateway-handler.ts), so `metadata.constructor` / `metadata.toString` would "exist".
    const none = requestGetter(req({}));
    expect(none('metadata.constructor')).toBeUndefined();
    expect(none('metadata.toString')).toBeUndefined();
    expect(m({ 'metadata.hasOwnProperty': { $exists: false } }, none)).toBe(true);
  });

  test('anything else is undefined', () => {
    expect(get('headers.authorization')).toBeUndefined();
    expect(get('model')).toBeUndefined();
    expect(get('params.')).toBeUndefined();
  });
});

describe('matches: operators', () => {
  test('$eq and a bare value', () => {
    expect(m({ 'metadata.tier': { $eq: 'pro' } })).toBe(true);
    expect(m({ 'metadata.tier': { $eq: 'free' } })).toBe(false);
    expect(m({ 'metadata.tier': 'pro' })).toBe(true);
    expect(m({ 'params.temperature': 0.7 })).toBe(true);
    expect(m({ 'params.stream': { $eq: true } })).toBe(true);
    expect(m({ 'params.nothing': { $eq: null } })).toBe(true);
  });

  test('$ne (a missing field is not equal to anything)', () => {
    expect(m({ 'metadata.tier': { $ne: 'free' } })).toBe(true);
    expect(m({ 'metadata.tier': { $ne: 'pro' } })).toBe(false);
    expect(m({ 'metadata.missing': { $ne: 'x' } })).toBe(true);
  });

  test('$gt $gte $lt $lte on numbers', () => {
    expect(m({ 'params.max_tokens': { $gt: 511 } })).toBe(true);
    expect(m({ 'params.max_tokens': { $gt: 512 } })).toBe(false);
    expect(m({ 'params.max_tokens': { $gte: 512 } })).toBe(true);
    expect(m({ 'params.max_tokens': { $lt: 513 } })).toBe(true);
    expect(m({ 'params.max_tokens': { $lt: 512 } })).toBe(false);
    expect(m({ 'params.max_tokens': { $lte: 512 } })).toBe(true);
    expect(m({ 'params.temperature': { $gte: 0.5, $lt: 1 } })).toBe(true); // several operators: all must hold
    expect(m({ 'params.temperature': { $gte: 0.5, $lt: 0.6 } })).toBe(false);
  });

  test('$gt and friends compare strings with strings, and never across types', () => {
    expect(m({ 'metadata.region': { $gt: 'de' } })).toBe(true);
    expect(m({ 'metadata.region': { $lt: 'de' } })).toBe(false);
    // metadata values are strings: "7" is not compared with the number 5
    expect(m({ 'metadata.count': { $gt: 5 } })).toBe(false);
    expect(m({ 'metadata.count': { $lte: 5 } })).toBe(false);
    expect(m({ 'metadata.missing': { $lt: 10 } })).toBe(false);
  });

  test('$in and $nin', () => {
    expect(m({ 'metadata.region': { $in: ['us', 'eu'] } })).toBe(true);
    expect(m({ 'metadata.region': { $in: ['us', 'ap'] } })).toBe(false);
    expect(m({ 'metadata.region': { $nin: ['us', 'ap'] } })).toBe(true);
    expect(m({ 'metadata.region': { $nin: ['eu'] } })).toBe(false);
    expect(m({ 'params.max_tokens': { $in: [256, 512] } })).toBe(true);
    expect(m({ 'metadata.region': { $in: 'eu' } })).toBe(false); // not a list
    expect(m({ 'metadata.region': { $nin: 'us' } })).toBe(false);
  });

  test('$regex', () => {
    expect(m({ 'params.model': { $regex: '^gpt-4o' } })).toBe(true);
    expect(m({ 'params.model': { $regex: 'claude' } })).toBe(false);
    expect(m({ 'params.messages[0].content': { $regex: 'brief$' } })).toBe(true);
    expect(m({ 'params.max_tokens': { $regex: '512' } })).toBe(false); // only strings are matched
    expect(m({ 'params.model': { $regex: '([' } })).toBe(false); // an invalid pattern matches nothing
    expect(m({ 'params.model': { $regex: 42 } })).toBe(false);
  });

  test('$regex runs catastrophic patterns in linear time (RE2)', () => {
    const started = performance.now();
    const evil = requestGetter({ ...req(), metadata: { s: `${'a'.repeat(40)}!` } });
    expect(m({ 'metadata.s': { $regex: '(a+)+$' } }, evil)).toBe(false);
    expect(m({ 'metadata.s': { $regex: 'a'.repeat(600) } }, evil)).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000); // backtracking: 2^40 steps
  });

  test('$regex: nested groups, overlapping alternations and polynomial patterns answer correctly and fast', () => {
    // A config author controls both the pattern and (through x-gateway-metadata) the input, and the match runs on the
    // event loop: on a backtracking engine each of these blocks every request for seconds. RE2 answers in linear time.
    const evil = requestGetter({ ...req(), metadata: { s: `${'a'.repeat(5000)}!` } });
    const cases: [string, boolean][] = [
      ['((a)+)+$', false],
      ['((a+))+$', false],
      ['(a|a)*$', true], // matches the empty string at the end
      ['a*a*a*a*a*a*a*b', false],
      ['(a|aa)+!$', true],
    ];
    for (const [pattern, expected] of cases) {
      const started = performance.now();
      expect(m({ 'metadata.s': { $regex: pattern } }, evil)).toBe(expected);
      expect(performance.now() - started).toBeLessThan(2_000); // backtracking: seconds to forever
    }
  });

  test('$regex: patterns RE2 cannot express (back-references, look-arounds) never match', () => {
    expect(m({ 'metadata.tier': { $regex: '(p)\\1' } })).toBe(false);
    expect(m({ 'metadata.tier': { $regex: 'p(?=r)' } })).toBe(false);
  });

  test('$exists', () => {
    expect(m({ 'metadata.tier': { $exists: true } })).toBe(true);
    expect(m({ 'metadata.nope': { $exists: true } })).toBe(false);
    expect(m({ 'metadata.nope': { $exists: false } })).toBe(true);
    expect(m({ 'params.nothing': { $exists: true } })).toBe(true); // null is a value
    expect(m({ 'params.response_format.json_schema': { $exists: true } })).toBe(true);
  });

  test('an unknown operator matches nothing', () => {
    expect(m({ 'metadata.tier': { $like: 'pro' } })).toBe(false);
  });

  test('an object without operators is compared as a value (and plain objects are not equal by content)', () => {
    expect(m({ 'params.response_format': { type: 'json_schema' } })).toBe(false);
  });
});

describe('matches: combinations', () => {
  test('several fields at the top level must all match', () => {
    expect(m({ 'metadata.tier': 'pro', 'params.stream': true })).toBe(true);
    expect(m({ 'metadata.tier': 'pro', 'params.stream': false })).toBe(false);
  });

  test('$and and $or', () => {
    expect(m({ $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'eu' }] })).toBe(true);
    expect(m({ $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'us' }] })).toBe(false);
    expect(m({ $or: [{ 'metadata.tier': 'free' }, { 'metadata.region': 'eu' }] })).toBe(true);
    expect(m({ $or: [{ 'metadata.tier': 'free' }, { 'metadata.region': 'us' }] })).toBe(false);
    expect(m({ $and: [] })).toBe(true);
    expect(m({ $or: [] })).toBe(false);
    expect(m({ $and: { 'metadata.tier': 'pro' } })).toBe(false); // not a list
  });

  test('nested $and / $or over metadata, params and url.pathname', () => {
    const query: Query = {
      $or: [
        { $and: [{ 'metadata.tier': { $in: ['pro', 'enterprise'] } }, { 'params.max_tokens': { $gte: 500 } }] },
        { $and: [{ 'url.pathname': { $eq: '/v1/embeddings' } }, { $or: [{ 'params.model': { $regex: 'embed' } }, { 'metadata.region': 'eu' }] }] },
      ],
      'params.messages[1].role': 'user',
    };
    expect(m(query)).toBe(true);
    expect(m(query, requestGetter(req({ tier: 'free', region: 'eu' })))).toBe(false);
    expect(m(query, requestGetter(req({ tier: 'free', region: 'eu' }, '/embeddings')))).toBe(true);
    expect(m(query, requestGetter(req({ tier: 'free', region: 'us' }, '/embeddings')))).toBe(false);
  });

  test('the empty query matches', () => {
    expect(m({})).toBe(true);
  });
});
