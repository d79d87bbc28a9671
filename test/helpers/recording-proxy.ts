import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a tool sent, as it sent it. */
export interface ProxiedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  /** The JSON body, when there was one. */
  body?: any;
}

/** Passes requests on to `target` as they are, keeping each request a tool sent. */
export async function startRecordingProxy(target: string): Promise<{ url: string; requests: ProxiedRequest[]; close(): Promise<void> }> {
  const requests: ProxiedRequest[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = body.length > 0 && /json/.test(incoming.headers['content-type'] ?? '');
      requests.push({ path: incoming.url ?? '', headers: incoming.headers, ...(json ? { body: JSON.parse(body.toString('utf8')) } : {}) });
      const forward = httpRequest(`${target}${incoming.url}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      });
      forward.on('error', () => outgoing.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
