// Entry of an index worker thread. A worker thread does not inherit the main thread's loader: beside the compiled
// module (dist/, npm run build) it imports that; beside the TypeScript source it registers tsx first.
import { existsSync } from 'node:fs';

const compiled = new URL('./index-worker.js', import.meta.url);
let serveShards;
if (existsSync(compiled)) {
  ({ serveShards } = await import(compiled.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ serveShards } = await import('./index-worker.ts'));
}
serveShards();
