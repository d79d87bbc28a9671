/**
 * The floor under any gateway built on Node's HTTP stack: a proxy that does nothing a gateway does
 * beyond reading the request (JSON.parse, the model replaced, JSON.stringify) and forwarding it with
 * a keep-alive node:http agent (as this gateway's upstream client does), its answer piped back byte
 * for byte, streams included. No keys, limits, holds, receipts, translation or log.
 *
 * Run beside the gateway in one bench-peers run, so that "gateway CPU per request" has a floor
 * measured in the same minutes (docs/performance.md):
 *   printf 'floor\thttp://127.0.0.1:9002/v1/chat/completions\t-\tnode %s/bench/floor-proxy.mjs\tmock/gpt-4o-mini\n' "$PWD" >> /tmp/targets.tsv
 *
 * Environment: FLOOR_PORT (9002), FLOOR_UPSTREAM (http://127.0.0.1:18080/v1/chat/completions, the
 * bench-peers mock), FLOOR_MODEL (gpt-4o-mini, what the upstream is sent).
 */
import http from 'node:http';

const port = Number(process.env.FLOOR_PORT ?? 9002);
const upstream = new URL(process.env.FLOOR_UPSTREAM ?? 'http://127.0.0.1:18080/v1/chat/completions');
const model = process.env.FLOOR_MODEL ?? 'gpt-4o-mini';
const agent = new http.Agent({ keepAlive: true, maxSockets: 128, scheduling: 'lifo' });

http
  .createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        response.writeHead(400).end();
        return;
      }
      body.model = model;
      const payload = JSON.stringify(body);
      const call = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: upstream.pathname,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' });
          answer.pipe(response);
        },
      );
      call.on('error', () => response.destroy());
      call.end(payload);
    });
  })
  .listen(port, '127.0.0.1');
