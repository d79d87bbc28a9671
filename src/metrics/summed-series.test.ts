import assert from 'node:assert/strict';
import { test } from 'node:test';
import client from 'prom-client';
import { SummedCounter, SummedHistogram } from './summed-series.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.1, 1];
const observations: Array<[endpoint: string, stream: string, seconds: number]> = [
  ['chat.completions', 'false', 0.003],
  ['chat.completions', 'true', 0.2],
  ['chat.completions', 'false', 0.01],
  ['messages', 'true', 7.5], // past the last bound: +Inf, sum and count only
  ['chat.completions', 'false', 0],
  ['messages', 'true', 0.025],
];

/** The same counts through prom-client's own metrics and through the summed ones. */
function both() {
  const theirs = new client.Registry();
  const ours = new client.Registry();
  const help = 'a help text with a \\ backslash';
  const theirCounter = new client.Counter({ name: 'x_total', help, labelNames: ['endpoint', 'stream'], registers: [theirs] });
  const theirHistogram = new client.Histogram({ name: 'x_seconds', help, labelNames: ['endpoint', 'stream'], buckets: BUCKETS, registers: [theirs] });
  const ourCounter = new SummedCounter({ name: 'x_total', help, labelNames: ['endpoint', 'stream'] });
  const ourHistogram = new SummedHistogram({ name: 'x_seconds', help, labelNames: ['endpoint', 'stream'], buckets: BUCKETS });
  // Half counted before the registry exists (the gateway loads prom-client at the first scrape): they count all the same.
  const registerOurs = () => {
    ourCounter.registerIn(client, ours);
    ourHistogram.registerIn(ours);
  };
  for (const [index, [endpoint, stream, seconds]] of observations.entries()) {
    if (index === observations.length / 2) registerOurs();
    const labels = () => ({ endpoint, stream });
    theirCounter.inc(labels(), seconds * 10);
    ourCounter.add(`${endpoint}\0${stream}`, seconds * 10, labels);
    theirHistogram.observe(labels(), seconds);
    ourHistogram.observe(`${endpoint}\0${stream}`, seconds, labels);
  }
  return { theirs, ours, ourHistogram };
}

test('a scrape reads exactly what prom-client would render for the same counts', async () => {
  const { theirs, ours } = both();
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  assert.match(text, /x_seconds_bucket\{le="\+Inf",endpoint="messages",stream="true"\} 2/);
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
  // A second scrape sees the same, not twice as much.
  assert.equal(await ours.metrics(), await theirs.metrics());
});

test('reset empties the summed series as it does prom-client metrics', async () => {
  const { theirs, ours } = both();
  theirs.resetMetrics();
  ours.resetMetrics();
  assert.equal(await ours.metrics(), await theirs.metrics());
});

test('a counter refuses to go down and a histogram refuses what is not a number', () => {
  const counter = new SummedCounter({ name: 'y_total', help: 'y', labelNames: ['a'] });
  const histogram = new SummedHistogram({ name: 'y_seconds', help: 'y', labelNames: ['a'], buckets: BUCKETS });
  assert.throws(() => counter.add('a', -1, () => ({ a: 'a' })), RangeError);
  assert.throws(() => histogram.observe('a', Number.NaN, () => ({ a: 'a' })), TypeError);
});
