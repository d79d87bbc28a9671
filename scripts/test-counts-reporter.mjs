// A node:test reporter that scripts/run-tests.mjs gives each test file beside the reporter a
// person reads (spec or dot): it writes one JSON line, the file's counts as node's own summary
// gives them (tests, suites, pass, fail, cancelled, skipped, todo) and the tests that failed, so
// the runner can add up a run and list its failures at the end without parsing the readable output.
const COUNT = /^(tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/;

export default async function* testCounts(source) {
  const counts = {};
  const failures = [];
  for await (const event of source) {
    if (event.type === 'test:diagnostic') {
      const match = COUNT.exec(event.data.message);
      if (match) counts[match[1]] = Number(match[2]);
    } else if (event.type === 'test:fail') {
      const error = event.data.details?.error;
      // A suite fails when one of its tests does: that test is listed already.
      if (error?.failureType === 'subtestsFailed') continue;
      const cause = error?.cause ?? error;
      const message = String(cause?.message ?? cause ?? 'failed').split('\n')[0];
      failures.push({ name: event.data.name, message });
    }
  }
  yield `${JSON.stringify({ counts, failures })}\n`;
}
