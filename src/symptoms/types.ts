import { z } from 'zod';

/** The DL symptom taxonomy of DESIGN.md. */
export const SymptomKind = z.enum([
  // crash
  'shape_mismatch',
  'dtype_mismatch',
  'device_mismatch',
  'cuda_unavailable',
  'out_of_memory',
  'import_error',
  'api_error',
  'value_error',
  'index_error',
  'type_error',
  'key_error',
  'cuda_device_assert',
  'other_crash',
  // silent
  'nan_inf',
  'loss_not_decreasing',
  'loss_diverging',
  'accuracy_at_chance',
  'accuracy_stuck',
  'constant_predictions',
  'exploding_gradients',
  'vanishing_gradients',
  'wrong_values',
  // performance
  'slow_step',
  'memory_growth',
  // hang
  'timeout',
]);
export type SymptomKind = z.infer<typeof SymptomKind>;

export const SymptomCategory = z.enum(['crash', 'silent', 'performance', 'hang']);
export type SymptomCategory = z.infer<typeof SymptomCategory>;

export const ExceptionInfo = z.object({
  /** Class name without its module (`OutOfMemoryError`): what matching compares, as the benchmark judge does. */
  type: z.string(),
  message: z.string(),
  /** The dotted name when the output printed one (`torch.cuda.OutOfMemoryError`). */
  qualifiedType: z.string().optional(),
});
export type ExceptionInfo = z.infer<typeof ExceptionInfo>;

export const Symptom = z.object({
  kind: SymptomKind,
  category: SymptomCategory,
  /** The output excerpt that shows it. */
  evidence: z.string(),
  exception: ExceptionInfo.optional(),
  /** Metric name for silent symptoms (loss, accuracy, val_loss…). */
  metric: z.string().optional(),
  /**
   * A message the report quotes as what it got, with no exception class (a compiler's message, a code comment's
   * `# gives "…"`): a run whose exception carries these words reproduces it, whatever its class (issue 40).
   */
  quoted: z.string().optional(),
  /**
   * A "should work" expectation ("should still be script-able", "should not raise"): a run that raises inside the call
   * named here (a regex source over the call's text; '' for any call of the report's code) is the expectation failing.
   */
  raisedIn: z.string().optional(),
});
export type Symptom = z.infer<typeof Symptom>;

export const Frame = z.object({ file: z.string(), line: z.number().int(), function: z.string(), code: z.string().optional() });
export type Frame = z.infer<typeof Frame>;

export const Traceback = z.object({
  exception: ExceptionInfo,
  frames: z.array(Frame),
  /** The innermost frame outside site-packages / the standard library: the user's own code. */
  userFrame: Frame.nullable(),
  /** Earlier exceptions this one was raised while handling ("During handling of the above exception…"), oldest first. */
  chain: z.array(ExceptionInfo).optional(),
});
export type Traceback = z.infer<typeof Traceback>;

export const MetricSeries = z.object({
  name: z.string(),
  /** Finite values in printed order (NaN/Inf are counted in `nonFinite`, so the series stays JSON-safe). */
  values: z.array(z.number()),
  /** How many NaN/Inf values were printed for this metric. */
  nonFinite: z.number().int().min(0).optional(),
});
export type MetricSeries = z.infer<typeof MetricSeries>;

/** What one run's output shows. */
export const RunReading = z.object({
  exception: ExceptionInfo.nullable(),
  traceback: Traceback.nullable(),
  warnings: z.array(z.string()),
  metrics: z.array(MetricSeries),
  symptoms: z.array(Symptom),
  /** Distinct output lines with digits folded to `#` (capped): lets matchRun compare line shapes without the raw output. */
  lineShapes: z.array(z.string()).optional(),
});
export type RunReading = z.infer<typeof RunReading>;

export const MatchVerdict = z.enum(['reproduced', 'partial', 'not_reproduced']);
export type MatchVerdict = z.infer<typeof MatchVerdict>;

/** One comparison of a reported value with the run's: what, both sides, and why they count as agreeing or not. */
export const ValueComparison = z.object({
  /** What was compared ("the exception", "the report's last output line"). */
  what: z.string(),
  report: z.string(),
  run: z.string(),
  /**
   * `determined`: the report's code fixes the values (seeded, synthetic, deterministic), so they are compared
   * within a tolerance. `random_state`: they depend on the reporter's random state or data, so only their
   * pattern is compared.
   */
  basis: z.enum(['determined', 'random_state']),
  agree: z.boolean(),
  /** The rule applied, in words (tolerance, or why only the pattern). */
  note: z.string(),
  /** The report's numbers that were not compared (random state), when some were left out. */
  notCompared: z.array(z.string()).optional(),
});
export type ValueComparison = z.infer<typeof ValueComparison>;

/**
 * A behavioural reproduction's oracle (issue 28): the script's assertion of the report's expectation, the expected
 * value (from the report's words) and what the run showed. Both sides, so the comment and the fix check can show them.
 */
export const OracleValues = z.object({
  form: z.enum(['compare', 'raises', 'warns']),
  /** The assertion as the script writes it. */
  assertion: z.string(),
  /** Its script lines (1-based). */
  line: z.number().int().min(1),
  /** The expected value or behaviour, as the assertion states it (`1.2`, `ValueError`). */
  expected: z.string(),
  /** The report's words the expected value comes from. */
  quote: z.string(),
  /** What the report says it saw instead, when it says. */
  reportObserved: z.string().optional(),
  /** What this run showed: the assertion's message or the printed value; null when nothing was printed. */
  observed: z.string().nullable(),
  /** The assertion held in this run (the expected behaviour, as at a fix). */
  held: z.boolean(),
});
export type OracleValues = z.infer<typeof OracleValues>;

export const MatchResult = z.object({
  verdict: MatchVerdict,
  score: z.number().min(0).max(1),
  reasons: z.array(z.string()),
  /** The values compared, so a reader sees both sides. Absent on results built before this existed. */
  compared: z.array(ValueComparison).optional(),
  /**
   * "partial: pattern reproduced": everything a faithful script can reach agrees, and only values that depend
   * on the reporter's random state differ. Refining cannot do better, so the agent stops.
   */
  patternOnly: z.boolean().optional(),
  /** A behavioural bug's oracle as this run showed it (check-oracle.ts); absent for crashes and printed patterns. */
  oracle: OracleValues.optional(),
});
export type MatchResult = z.infer<typeof MatchResult>;

export const CodeBlock = z.object({ lang: z.string(), code: z.string() });
export type CodeBlock = z.infer<typeof CodeBlock>;

export const VersionPin = z.object({ name: z.string(), version: z.string() });
export type VersionPin = z.infer<typeof VersionPin>;

/** What a bug report (markdown issue body) shows, read deterministically: no model involved. */
export const ReportReading = z.object({
  title: z.string(),
  codeBlocks: z.array(CodeBlock),
  tracebacks: z.array(Traceback),
  /** Lines such as `RuntimeError: …` found outside full tracebacks too. */
  errorLines: z.array(z.string()),
  /** Lines that print training metrics (loss/accuracy…), as reported. */
  metricLines: z.array(z.string()),
  metrics: z.array(MetricSeries),
  versions: z.array(VersionPin),
  /** All output the reporter pasted (non-code blocks and error text): a script must never print it literally. */
  outputText: z.string(),
  /** The symptoms a reproduction must show. Empty when the report shows none (prose only). */
  expected: z.array(Symptom),
  /** What the report says should happen and what happened instead, each with the report's words (read-expectations.ts). */
  expectations: z
    .array(
      z.object({
        kind: z.string(),
        quote: z.string(),
        subject: z.string().optional(),
        expected: z.string().optional(),
        observed: z.string().optional(),
        category: z.string().optional(),
      }),
    )
    .optional(),
  /**
   * Frames the report shows (of a traceback cut before its exception line too), innermost last: a run that raises the
   * reported class through the same function of the project matches a report whose message was cut (issue 40).
   */
  frames: z.array(Frame).optional(),
  /** Versions the prose gives without naming the package ("started appearing with 1.0.7"): never asked for again. */
  versionMentions: z.array(z.string()).optional(),
  /** The last line of the reported output (the benchmark's `expected_last_line`); '' when none was pasted. */
  lastOutputLine: z.string().optional(),
});
export type ReportReading = z.infer<typeof ReportReading>;
