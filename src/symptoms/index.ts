/**
 * The symptom reader: what a run's output shows, what a bug report shows, and whether the two match.
 * Everything here is pure (text in, data out); `repgen run` and the agent do the I/O.
 */
export * from './types.js';
export { readRun, type RunFlags } from './read-run.js';
export { readReport } from './read-report.js';
export { readExpectations, Expectation, ExpectationKind } from './read-expectations.js';
export { matchRun, isProse, type MatchOptions } from './match-run.js';
export { matchOracle, oracleHint, type OracleMatch } from './match-oracle.js';
export { behaviouralExpectations, oracleSection, renderOracle, stateOracle } from './check-oracle.js';
export { oracleAssertions, type OracleAssertion, type OracleForm } from './oracle-assertions.js';
export { classifyException, categoryOf } from './classify.js';
export { classifySeries, classifyPrintedValues } from './classify-series.js';
export {
  parseTracebacks,
  parseTracebackFragments,
  parseExceptionLine,
  parseWarnings,
  findErrorLines,
  lastExceptionLine,
  isLibraryFile,
} from './parse-tracebacks.js';
export { parseMetrics, parseMetricPoints, canonicalMetricName, isMetricLine, type MetricPoint } from './parse-metrics.js';
export { lineShape } from './text.js';
