import { createLocalExecutor } from '../../src/exec/local.js';
import { describeExecutorConformance } from './executor-conformance.js';

describeExecutorConformance('local (auto sandbox)', () => createLocalExecutor({}));
