export {
  buildResultComment,
  buildProgressComment,
  GITHUB_COMMENT_LIMIT,
  type ResultCommentOptions,
  type StageProgress,
  type StageState,
} from './build-result-comment.js';
export { metricChart } from './metric-chart.js';
export { createProgressTracker, type ProgressTracker } from './progress-tracker.js';
export { neutralizeMentions, redactSecrets } from './neutralize.js';
