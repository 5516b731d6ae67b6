// An index worker that serves shards like the real one, then dies (process.exit) when handed its second shard.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { handleShard } = await import('../../../src/context/index/index-worker.ts');
let served = 0;
parentPort.on('message', async (req) => {
  served += 1;
  if (served === 2) process.exit(7);
  const { reply, transfer } = await handleShard(req);
  parentPort.postMessage(reply, transfer);
});
