import { createLocalExecutor } from '../../src/exec/local/executor.js';
import { describeExecutorConformance } from './executor-conformance.js';

describeExecutorConformance('local (auto sandbox, native launcher)', () => createLocalExecutor({ launcher: 'native', warmPool: 'off' }));
describeExecutorConformance('local (auto sandbox, Python launcher)', () => createLocalExecutor({ launcher: 'python', warmPool: 'off' }));
describeExecutorConformance('local (warm pool: runs forked from a fork server with torch imported)', () =>
  createLocalExecutor({ warmPool: 'always' }),
);
