// Entry of an index worker thread. The sources are TypeScript loaded by tsx (no build step, see bin/repgen.js),
// and a worker thread does not inherit the main thread's loader: register it here, then serve shards.
import { register } from 'tsx/esm/api';

register();
const { serveShards } = await import('./index-worker.ts');
serveShards();
