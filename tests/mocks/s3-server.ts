/**
 * A local S3-compatible object store for tests (path-style `/<bucket>/<key>`): PUT, GET and DELETE of objects, each
 * request's SigV4 signature checked for service `s3` (403 SignatureDoesNotMatch on a mismatch) with the verifier the
 * Bedrock server uses, errors in S3's XML shape. Objects live in memory.
 */
import { verifyRequest } from '../providers/bedrock/sigv4.ts';
import { type RecordedRequest, startMockServer } from './harness.ts';

export interface S3Mock {
  url: string;
  /** Objects by `<bucket>/<key>` (the key as the path had it, decoded). */
  objects: Map<string, Uint8Array>;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

function s3Error(status: number, code: string, message: string): Response {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>test</RequestId></Error>`;
  return new Response(xml, { status, headers: { 'content-type': 'application/xml' } });
}

export function startS3Mock(opts: { bucket: string; region: string; accessKeyId: string; secretAccessKey: string }): S3Mock {
  const objects = new Map<string, Uint8Array>();
  const server = startMockServer({
    handle({ request, url, bytes }) {
      const rejected = verifyRequest(
        { method: request.method, url: request.url, headers: request.headers, body: bytes },
        { credentials: { [opts.accessKeyId]: { secret: opts.secretAccessKey } }, region: opts.region, service: 's3' },
      );
      if (rejected) return s3Error(403, 'SignatureDoesNotMatch', rejected.message);
      const [bucket, ...rest] = url.pathname.slice(1).split('/').map(decodeURIComponent);
      if (bucket !== opts.bucket) return s3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
      const key = `${bucket}/${rest.join('/')}`;
      if (request.method === 'PUT') {
        objects.set(key, bytes);
        return new Response(null, { status: 200, headers: { etag: `"${new Bun.CryptoHasher('md5').update(bytes).digest('hex')}"` } });
      }
      if (request.method === 'GET') {
        const object = objects.get(key);
        return object ? new Response(object, { headers: { 'content-type': 'application/octet-stream' } }) : s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
      }
      if (request.method === 'DELETE') {
        objects.delete(key);
        return new Response(null, { status: 204 });
      }
      return s3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    },
  });
  return { url: server.url, objects, requests: server.requests, stop: server.stop };
}
