// An index worker that answers every shard with an error, as the real one does when chunking throws.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (req) => parentPort.postMessage({ shard: req.shard, error: 'wasm memory access out of bounds' }));
