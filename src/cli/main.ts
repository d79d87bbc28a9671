import { runCli } from './run-cli.ts';

// Entry point of `gateway` (bin/gateway.js) and `npm run gateway`. The exit code is set, not
// forced, so output is flushed and `start` keeps running while its server is open.
process.exitCode = await runCli(process.argv.slice(2));
