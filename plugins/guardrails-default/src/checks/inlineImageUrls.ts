/**
 * `default.inlineImageUrls` {providers?, maxSizeBytes?=20 MiB, timeoutMs?=30000, failOnError?=false}: a transformer
 * that fetches the external images of user messages and puts them in the request as base64 `data:` URLs, for
 * providers that cannot fetch URLs themselves.
 *
 * - Input phase, chat completions only; the parts changed are `{type: "image_url", image_url: {url}}` (or
 *   `image_url: "<url>"`) in messages whose role is `user`, with an `http:` / `https:` URL. `data:` URLs and other
 *   schemes are left as they are. The same URL used twice is fetched once. Other fields of a part (`detail`) are kept.
 * - `providers`: when given, images are inlined only when the request can go to one of these providers: the config's
 *   `provider`, any target's `provider` (recursively), the `x-gateway-provider` header, or an `@provider/` model
 *   prefix. Otherwise the check passes without fetching.
 * - Each image is fetched with GET (at most 5 redirects, each hop re-checked: http/https only, host guard when
 *   provided), within `timeoutMs` for the whole download, and read up to `maxSizeBytes` (20 MiB = 20,971,520 bytes by
 *   default; a larger declared or actual size stops the download). It must answer 2xx with an `image/*` content type,
 *   or with bytes that look like PNG, JPEG, GIF or WebP. Up to 4 images are fetched at once.
 * - A failed image (too large, timeout, non-2xx, not an image, refused URL) is left as its URL and listed in
 *   `data.failed` as `{url, error: {kind, message, status?}}` (the URL without its query); with `failOnError: true` any failure fails the verdict (the images that did succeed are still
 *   inlined in `transformed`).
 * `transformed` is present when at least one image was inlined. The output phase passes untouched.
 */
import type { GatewayConfig, GuardrailCheckContext, Json, JsonObject } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';
import { type CheckError, type DefinedCheck, defineCheck } from '../check.ts';
import { type HttpDeps, OutboundError, checkError, guardedFetch } from '../http.ts';

export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_IMAGE_TIMEOUT_MS = 30_000;
const CONCURRENCY = 4;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The URL of an `image_url` part, in either shape. */
function partUrl(part: Json): string | undefined {
  if (!isObject(part) || part.type !== 'image_url') return undefined;
  const image = part.image_url;
  if (typeof image === 'string') return image;
  return isObject(image) && typeof image.url === 'string' ? image.url : undefined;
}

const isHttp = (url: string) => /^https?:\/\//i.test(url);

/** The providers a request may be routed to (see the top of this file). */
export function requestProviders(ctx: GuardrailCheckContext): Set<string> {
  const out = new Set<string>();
  const walk = (config: GatewayConfig | undefined, depth: number) => {
    if (!config || depth > 20) return;
    if (config.provider) out.add(config.provider.replace(/^@/, ''));
    for (const target of config.targets ?? []) walk(target, depth + 1);
  };
  walk(ctx.request.config, 0);
  const header = ctx.request.headers.get('x-gateway-provider');
  if (header) out.add(header.replace(/^@/, ''));
  const model = ctx.request.body?.model;
  if (typeof model === 'string' && model.startsWith('@') && model.indexOf('/') > 1) out.add(model.slice(1, model.indexOf('/')));
  return out;
}

/** The image type of these bytes, from their first bytes. */
export function sniffImage(bytes: Uint8Array): string | undefined {
  const b = (i: number) => bytes[i] ?? -1;
  if (b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47) return 'image/png';
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return 'image/jpeg';
  if (b(0) === 0x47 && b(1) === 0x49 && b(2) === 0x46 && b(3) === 0x38) return 'image/gif';
  if (b(0) === 0x52 && b(1) === 0x49 && b(2) === 0x46 && b(3) === 0x46 && b(8) === 0x57 && b(9) === 0x45 && b(10) === 0x42 && b(11) === 0x50)
    return 'image/webp';
  return undefined;
}

async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** An image URL as reported: origin and path, no query or fragment (signed URLs carry tokens there), at most 200 chars. */
export function shownUrl(url: string): string {
  let shown = url;
  try {
    const u = new URL(url);
    shown = `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {}
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
}

export function createInlineImageUrls(deps: HttpDeps): DefinedCheck {
  return defineCheck({
    name: 'inlineImageUrls',
    schema: Type.Object(
      {
        providers: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
        maxSizeBytes: Type.Optional(Type.Integer({ minimum: 1 })),
        timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
        failOnError: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    async run(ctx, p) {
      const body = ctx.request.body;
      if (ctx.phase !== 'input' || !body || !Array.isArray(body.messages))
        return { verdict: true, data: { inlined: 0, explanation: 'No chat request to inline images in.' } };
      if (p.providers) {
        const targets = requestProviders(ctx);
        const wanted = p.providers.map((x) => x.replace(/^@/, ''));
        if (!wanted.some((x) => targets.has(x)))
          return {
            verdict: true,
            data: { inlined: 0, skipped: true, explanation: 'The request does not go to one of the listed providers.' },
          };
      }
      const messages = body.messages;
      const urls = new Set<string>();
      for (const message of messages) {
        if (!isObject(message) || message.role !== 'user' || !Array.isArray(message.content)) continue;
        for (const part of message.content) {
          const url = partUrl(part);
          if (url !== undefined && isHttp(url)) urls.add(url);
        }
      }
      if (urls.size === 0) return { verdict: true, data: { inlined: 0, explanation: 'No external image URL in user messages.' } };

      const maxBytes = p.maxSizeBytes ?? DEFAULT_MAX_IMAGE_BYTES;
      const timeoutMs = p.timeoutMs ?? DEFAULT_IMAGE_TIMEOUT_MS;
      const inlined = new Map<string, string>();
      const failed: { url: string; error: CheckError }[] = [];
      await pool([...urls], CONCURRENCY, async (url) => {
        try {
          const answer = await guardedFetch(
            url,
            { method: 'GET', timeoutMs, maxBytes, signal: ctx.request.signal, what: `image ${shownUrl(url)}`, headers: { accept: 'image/*' } },
            deps,
          );
          if (answer.status < 200 || answer.status >= 300)
            throw new OutboundError(`image ${shownUrl(url)} answered ${answer.status}`, 'http_status', answer.status);
          const declared = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
          const type = declared.startsWith('image/') ? declared : sniffImage(answer.body);
          if (!type)
            throw new OutboundError(`image ${shownUrl(url)} is not an image (content type "${declared || 'none'}")`, 'unreadable');
          inlined.set(url, `data:${type};base64,${Buffer.from(answer.body).toString('base64')}`);
        } catch (error) {
          failed.push({ url: shownUrl(url), error: checkError(error) });
        }
      });

      let out: Json[] | undefined;
      messages.forEach((message, i) => {
        if (!isObject(message) || message.role !== 'user' || !Array.isArray(message.content)) return;
        let content: Json[] | undefined;
        message.content.forEach((part, j) => {
          const url = partUrl(part);
          const data = url !== undefined ? inlined.get(url) : undefined;
          if (data === undefined || !isObject(part)) return;
          content ??= (message.content as Json[]).slice();
          const image = part.image_url;
          content[j] = { ...part, image_url: isObject(image) ? { ...image, url: data } : { url: data } };
        });
        if (content) {
          out ??= messages.slice();
          out[i] = { ...message, content };
        }
      });

      const failOnError = p.failOnError ?? false;
      return {
        verdict: !(failOnError && failed.length > 0),
        ...(out ? { transformed: { ...body, messages: out } } : {}),
        data: {
          inlined: inlined.size,
          failed,
          explanation:
            failed.length === 0
              ? `Inlined ${inlined.size} image(s).`
              : `Inlined ${inlined.size} image(s); ${failed.length} could not be inlined${failOnError ? '' : ' and were left as URLs'}.`,
        },
      };
    },
  });
}
