import { createLocalExecutor } from '../../src/exec/local.js';
import { describeExecutorConformance } from './executor-conformance.js';

describeExecutorConformance('local (auto sandbox, native launcher)', () => createLocalExecutor({ launcher: 'native' }));
describeExecutorConformance('local (auto sandbox, Python launcher)', () => createLocalExecutor({ launcher: 'python' }));
describeExecutorConformance('local (warm pool: a sandbox started ahead with torch imported)', () =>
  createLocalExecutor({ warmPool: 'always' }),
);
