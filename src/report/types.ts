import { z } from 'zod';
import { ReportReading, VersionPin } from '../symptoms/types.js';

/** The issue as intake hands it on: what the report stage reads. */
export const IssueInput = z.object({
  title: z.string().default(''),
  body: z.string(),
  url: z.string().optional(),
  number: z.number().int().optional(),
});
export type IssueInput = z.infer<typeof IssueInput>;

/** What the deterministic reader adds to the symptom reader's ReportReading. */
export const ReportFacts = z.object({
  /** Code blocks that are Python, in the report's order. */
  pythonBlocks: z.array(z.string()),
  /** Code blocks in another language (C++, shell, JavaScript…): never run. */
  otherLanguageBlocks: z.array(z.object({ lang: z.string(), firstLine: z.string() })),
  /** GPU/CPU hints: "RTX 3090", "cuda:0", ".cuda()", "CPU only"… */
  hardwareHints: z.array(z.string()),
  /** Sentences and code that say what the data is (dataset names, shapes, files). */
  dataDescriptions: z.array(z.string()),
  /** Links to files the report attaches (archives, weights, notebooks, images). They are never downloaded. */
  attachments: z.array(z.object({ url: z.string(), kind: z.enum(['archive', 'weights', 'data', 'notebook', 'image', 'other']) })),
  /** Module-level statements of the report's traceback (`<module>` frames), in order. */
  tracebackModuleLines: z.array(z.string()),
  /** Frameworks the code imports (torch, tensorflow, keras, jax…). */
  frameworks: z.array(z.string()),
  /** Characters of the original body, and whether it was cut to the reading limit. */
  bodyChars: z.number().int().min(0),
  truncated: z.boolean(),
});
export type ReportFacts = z.infer<typeof ReportFacts>;

/** The report restructured (by the LLM when there is one, else deterministically). */
export const BugReport = z.object({
  title: z.string(),
  coreProblem: z.string(),
  observed: z.string(),
  expected: z.string(),
  steps: z.array(z.string()),
  environment: z.object({
    framework: z.string().nullable(),
    versions: z.array(VersionPin),
    hardware: z.string(),
    data: z.string(),
  }),
  source: z.enum(['deterministic', 'llm']),
});
export type BugReport = z.infer<typeof BugReport>;

/** What the LLM is asked to return: BugReport without `source`, parsed permissively (models drift). */
export const LlmBugReport = z.object({
  coreProblem: z.string().catch(''),
  observed: z.string().catch(''),
  expected: z.string().catch(''),
  steps: z.array(z.string()).catch([]),
  environment: z
    .object({
      framework: z.string().nullable().catch(null),
      hardware: z.string().catch(''),
      data: z.string().catch(''),
    })
    .partial()
    .catch({}),
});
export type LlmBugReport = z.infer<typeof LlmBugReport>;

export const ReportResult = z.object({ reading: ReportReading, facts: ReportFacts, bug: BugReport, notes: z.array(z.string()) });
export type ReportResult = z.infer<typeof ReportResult>;
