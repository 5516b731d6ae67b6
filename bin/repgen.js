#!/usr/bin/env node
// Entry point for `npx repgen`. The sources are TypeScript; tsx loads them directly so that
// there is no build step to forget between `npm ci` and the first run.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
