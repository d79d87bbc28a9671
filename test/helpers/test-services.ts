/**
 * The unit run (`npm run test:unit`, scripts/run-tests.mjs --unit) sets TEST_SERVICES=none: the
 * suites that need a PostgreSQL or Redis server register as skipped, even under CI=true, so the
 * unit run needs no server. `npm test` leaves it unset and runs them.
 */
export function servicesSkipped(): boolean {
  return process.env.TEST_SERVICES === 'none';
}
