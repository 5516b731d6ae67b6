import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';

/**
 * `.github/repgen.yml`: what a repository lets RepGen do. Our own config, so it is strict: a key we do not
 * know is an error that names the key (a typo like `gpus:` must not silently run without a GPU).
 * Defaults apply only when the file is absent; a file that fails validation stops the run.
 */

export const TriggerRole = z.enum(['admin', 'maintain', 'write', 'triage']);
export type TriggerRole = z.infer<typeof TriggerRole>;

const Hostname = z
  .string()
  .regex(/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/, 'must be a host name such as pypi.org or *.pythonhosted.org');

/**
 * `environment:`: what the project's runs need installed, beyond what RepGen reads from the repository (its
 * pyproject.toml, setup.py, requirement files) and the report (the versions it names). src/env reads it.
 */
export const EnvironmentConfig = z
  .object({
    /** Python version of the env (`3.10`); wins over the report's and the top-level `python`. */
    python: z
      .string()
      .regex(/^3\.\d{1,2}$/, 'must look like 3.11')
      .optional()
      .describe('Python version of the env, e.g. "3.10"; wins over the version the report names.'),
    /** Requirement files of the repository to install (`requirements/dev.txt`), besides its declared dependencies. @defaultValue [] */
    requirements: z
      .array(
        z
          .string()
          .min(1)
          .max(300)
          .regex(/^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[\w./-]+$/, 'must be a path inside the repository'),
      )
      .max(20)
      .default([])
      .describe('Requirement files of the repository to install besides its declared dependencies.'),
    /** Extra requirements (`numpy<1.24`, `opencv-python-headless`). @defaultValue [] */
    packages: z
      .array(z.string().min(1).max(200))
      .max(100)
      .default([])
      .describe("Extra requirements, PEP 508 (`numpy<1.24`); they win over the repository's own ranges."),
    /** Optional extras of the project to install (`torch`, `training`). @defaultValue [] */
    extras: z
      .array(z.string().regex(/^[A-Za-z0-9][\w.-]*$/))
      .max(20)
      .default([])
      .describe('Optional extras of the project to install, e.g. ["torch"].'),
    /** Package index to resolve from; it must be on the operator's REPGEN_ENV_INDEXES. */
    index: z.string().url().optional().describe("Package index URL to resolve from; must be on the operator's REPGEN_ENV_INDEXES."),
    /** More indexes (e.g. https://download.pytorch.org/whl/cpu); each must be on REPGEN_ENV_INDEXES. @defaultValue [] */
    extraIndexes: z
      .array(z.string().url())
      .max(5)
      .default([])
      .describe("More package indexes (e.g. PyTorch's); each must be on the operator's REPGEN_ENV_INDEXES."),
    /** Shell commands run in the env after the install, with network to the indexes only (`python setup.py build_ext --inplace`). @defaultValue [] */
    build: z
      .array(z.string().min(1).max(1000))
      .max(20)
      .default([])
      .describe('Shell commands run in the env after the install, with network to the indexes only.'),
    /** Base image of the env on Kubernetes; the image table picks one when absent. */
    image: z.string().min(1).max(300).optional().describe('Base image of the env for the Kubernetes executor.'),
  })
  .strict();
export type EnvironmentConfig = z.infer<typeof EnvironmentConfig>;
/** A key of repgen.yml's `environment:` as advice names it (`environment.packages`): only keys the schema accepts. */
export type EnvironmentConfigKey = `environment.${keyof EnvironmentConfig}`;

export const RepoConfig = z
  .object({
    /** Label that starts a run when added to an issue. @defaultValue 'needs-repro' */
    label: z.string().min(1).max(50).default('needs-repro').describe('Label that starts a run when added to an issue.'),
    /** Repository roles allowed to trigger a run (bots never can). Add `triage` to let triagers run it. @defaultValue ['admin','maintain','write'] */
    trigger: z
      .array(TriggerRole)
      .min(1)
      .default(['admin', 'maintain', 'write'])
      .describe('Repository roles allowed to trigger a run; bots never can.'),
    executor: z
      .object({
        /** Where scripts run: the worker's local sandbox or a Kubernetes Job. @defaultValue 'local' */
        kind: z
          .enum(['local', 'kubernetes'])
          .default('local')
          .describe("Where scripts run: the worker's local sandbox or a Kubernetes Job."),
        /** Container image for the Kubernetes executor; the image table picks one when absent. */
        image: z.string().min(1).max(300).optional().describe('Container image for the Kubernetes executor.'),
      })
      .strict()
      .default({ kind: 'local' }),
    /** Shell commands run in the script's working directory before each run (e.g. `pip install -e .`). @defaultValue [] */
    setup: z
      .array(z.string().min(1).max(1000))
      .max(20)
      .default([])
      .describe("Shell commands run in the script's working directory before each run."),
    /** Request a GPU for every run (a `/repgen --gpu` comment asks for one run). @defaultValue false */
    gpu: z.boolean().default(false).describe('Request a GPU for every run.'),
    network: z
      .object({
        /** Hosts scripts may reach; empty means no network at all. @defaultValue [] */
        allow: z.array(Hostname).max(50).default([]).describe('Hosts scripts may reach (Kubernetes executor); empty means no network.'),
      })
      .strict()
      .default({ allow: [] }),
    /** Python version the repository targets (`3.11`); recorded and used to choose the image. */
    python: z
      .string()
      .regex(/^3\.\d{1,2}$/, 'must look like 3.11')
      .optional()
      .describe('Python version the repository targets, e.g. "3.11".'),
    /** The project's environment: Python, requirement files, packages, indexes, build commands. Absent: read from the repository. */
    environment: EnvironmentConfig.optional(),
    /**
     * Lower caps for this repository's runs. Each is a request under the operator's ceiling
     * (REPGEN_MAX_ATTEMPTS, REPGEN_MAX_TOKENS, REPGEN_MAX_COST_USD, REPGEN_WALL_CLOCK_MS): asking more
     * than the operator allows gets the operator's value. Absent: the operator's value.
     */
    caps: z
      .object({
        attempts: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .describe("Script attempts over the whole run; at most the operator's REPGEN_MAX_ATTEMPTS."),
        tokens: z
          .number()
          .int()
          .min(1000)
          .max(100_000_000)
          .optional()
          .describe("LLM tokens (input + output) over the whole run; at most the operator's REPGEN_MAX_TOKENS."),
        costUsd: z
          .number()
          .min(0)
          .max(10_000)
          .optional()
          .describe("LLM spend in US dollars over the whole run (0: no model); at most the operator's REPGEN_MAX_COST_USD."),
        minutes: z
          .number()
          .int()
          .min(1)
          .max(1440)
          .optional()
          .describe("Wall-clock minutes for the whole run; at most the operator's REPGEN_WALL_CLOCK_MS."),
      })
      .strict()
      .default({}),
    /**
     * After a reproduction, a candidate fix from the model, run against the reproduction in a scratch copy of the
     * checkout; the comment says whether it makes the reproduction pass and shows the diff, folded (issue 41).
     * `false` turns it off; the operator's REPGEN_SUGGEST_FIX can only turn it off too. @defaultValue true
     */
    suggestFix: z
      .boolean()
      .default(true)
      .describe(
        'After a reproduction, ask the model for a candidate fix and say whether the reproduction passes with it (the diff is shown folded, unreviewed).',
      ),
    /** Regression-test PR: `off`, on `/repgen pr` only (`command`), or opened for every reproduced run (`auto`). @defaultValue 'command' */
    pr: z
      .enum(['off', 'command', 'auto'])
      .default('command')
      .describe('Regression-test PR: off, on `/repgen pr` only (command), or for every reproduced run (auto).'),
    /**
     * The regression-test PR carries a fix-sensitive candidate fix (`suggestFix`) as a separate commit after the test's,
     * the test made plain in it (issue 41 item 3). `false` keeps the PR to the test alone; the comment still shows the
     * change. @defaultValue true
     */
    prCandidateCommit: z
      .boolean()
      .default(true)
      .describe(
        'The regression-test PR carries a candidate fix that makes the reproduction pass as a separate commit (generated, unreviewed); false: the test alone.',
      ),
  })
  .strict();
export type RepoConfig = z.infer<typeof RepoConfig>;

/** One problem of a config file, named by its key path (`caps.minutes`) so the comment can point at it. */
export interface ConfigProblem {
  key: string;
  message: string;
}

export type RepoConfigResult = { ok: true; config: RepoConfig; source: 'file' | 'defaults' } | { ok: false; problems: ConfigProblem[] };

/** Biggest config we read; anything larger is not a hand-written config. */
const MAX_BYTES = 64 * 1024;

/**
 * Parses the text of `.github/repgen.yml`; `null` (file absent) gives the defaults.
 * An empty file or a file holding only comments also means "all defaults" — it is present and valid.
 */
export function parseRepoConfig(text: string | null): RepoConfigResult {
  if (text === null) return { ok: true, config: RepoConfig.parse({}), source: 'defaults' };
  if (Buffer.byteLength(text) > MAX_BYTES)
    return { ok: false, problems: [{ key: '(file)', message: `is larger than ${MAX_BYTES} bytes` }] };
  let data: unknown;
  try {
    // maxAliasCount guards against alias bombs ("billion laughs"); uniqueKeys rejects silent overrides.
    data = parseYaml(text, { maxAliasCount: 50, uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    const line = err instanceof YAMLParseError && err.linePos ? ` (line ${err.linePos[0].line})` : '';
    return {
      ok: false,
      problems: [
        {
          key: '(file)',
          message: `is not valid YAML${line}: ${firstLine((err as Error).message).replace(/ at line \d+, column \d+:?$/, '')}`,
        },
      ],
    };
  }
  if (data === null || data === undefined) return { ok: true, config: RepoConfig.parse({}), source: 'file' };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, problems: [{ key: '(file)', message: 'must be a mapping of settings (key: value)' }] };
  }
  const parsed = RepoConfig.safeParse(data);
  if (parsed.success) return { ok: true, config: parsed.data, source: 'file' };
  return { ok: false, problems: parsed.error.issues.flatMap(toProblems) };
}

function toProblems(issue: z.core.$ZodIssue): ConfigProblem[] {
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({ key: base ? `${base}.${k}` : k, message: 'is not a known setting' }));
  }
  return [{ key: base || '(file)', message: issue.message }];
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').slice(0, 200);
}

/** The JSON Schema of `.github/repgen.yml` (for editors; `npm run schemas` writes schemas/repgen.schema.json). */
export function repoConfigJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(RepoConfig, { io: 'input' }),
    $id: 'https://github.com/repgen/repgen/schemas/repgen.schema.json',
    title: 'RepGen repository configuration (.github/repgen.yml)',
  };
}
