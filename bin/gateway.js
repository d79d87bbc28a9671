#!/usr/bin/env node
// Plain JS so `npx gateway` and the package bin work without a build: tsx compiles the
// TypeScript sources on the fly.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
