import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy to a local service (PostgreSQL, Redis) that a test can make stop answering without
 * touching the service other tests share: `stall` keeps every connection open and forwards
 * nothing (a server that hangs), `refuse` cuts every connection and refuses new ones (a server
 * that is down), `restore` forwards again. `dropReplyTo` loses one reply: the next request
 * whose bytes contain the marker reaches the service, and the connection is cut when the
 * service answers it (a commit whose reply was lost).
 */
export interface TcpProxy {
  readonly port: number;
  /** Resolves once a reply was dropped. */
  dropReplyTo(marker: string): Promise<void>;
  stall(): void;
  refuse(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let mode: 'forward' | 'stall' | 'refuse' = 'forward';
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let dropping: { marker: Buffer; dropped: () => void } | null = null;
  const server: Server = createServer((client) => {
    if (mode === 'refuse') return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('data', (bytes: Buffer) => {
      if (!dropping || !bytes.includes(dropping.marker)) return;
      const { dropped } = dropping;
      dropping = null;
      // The request goes on (piped); its answer is the first thing never to come back.
      upstream.unpipe(client);
      upstream.once('data', () => {
        end();
        dropped();
      });
      upstream.resume();
    });
    if (mode === 'stall') stallPair(pair);
  });
  const stallPair = (pair: { client: Socket; upstream: Socket }) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    dropReplyTo(marker) {
      return new Promise((resolve) => (dropping = { marker: Buffer.from(marker), dropped: resolve }));
    },
    stall() {
      mode = 'stall';
      for (const pair of pairs) stallPair(pair);
    },
    refuse() {
      mode = 'refuse';
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = 'forward';
      for (const { client, upstream } of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        upstream.resume();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
