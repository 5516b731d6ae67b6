import type { ReportFacts, ReportResult } from '../report/types.js';
import { resolveScriptCalls, type ResolvedCall } from '../context/resolve-script-calls.js';

/**
 * Module roots that are one framework under another name: Keras ships inside TensorFlow (`tensorflow.keras`,
 * `tf_keras`) and is TensorFlow's own high-level API (a report of `tf.nn.relu` activations in a `Sequential` is
 * reproduced through `keras.layers`), Lightning has two package names. A subject is met by any of its forms.
 */
const FORMS: Record<string, readonly string[]> = {
  keras: ['keras', 'tensorflow.keras', 'tensorflow.python.keras', 'tf_keras'],
  tensorflow: ['tensorflow', 'keras', 'tf_keras'],
  lightning: ['lightning', 'pytorch_lightning'],
  pytorch_lightning: ['pytorch_lightning', 'lightning'],
};

/** Whether a dotted module path (`tensorflow.keras.backend.mean`) lies in the subject `keras`. */
export function inSubject(path: string, subject: string): boolean {
  return (FORMS[subject] ?? [subject]).some((form) => path === form || path.startsWith(`${form}.`));
}

/**
 * What a report is about, as modules: the frameworks its code uses (src/report/extract-facts.ts reads the module of
 * each import, so `import torch as K` counts as torch) and the project's own packages. numpy is left out when
 * anything else is there: nearly every script imports it, so it says nothing about which framework a bug is in.
 */
export function reportSubjects(facts: Pick<ReportFacts, 'frameworks'>, projectPackages: readonly string[] = []): string[] {
  const frameworks = facts.frameworks.length > 1 ? facts.frameworks.filter((f) => f !== 'numpy') : facts.frameworks;
  return [...new Set([...frameworks, ...projectPackages])];
}

/** The modules a run lacks that are what the report is about (`tensorflow` when the report uses TensorFlow). */
export function missingSubjects(missing: readonly string[], subjects: readonly string[]): string[] {
  return missing.filter((m) => subjects.some((s) => inSubject(m, s)));
}

/** Why no run here can be a reproduction when the environment lacks what the report is about, or what its code calls. */
export function lackedSubjectsSentence(lacked: readonly string[], subjects?: readonly string[]): string {
  const names = lacked.map((m) => `\`${m}\``).join(', ');
  const about = !subjects || lacked.some((m) => subjects.some((s) => inSubject(m, s)));
  const what = about
    ? 'which the report is about: no run here can show the bug, and a script in another framework would not be a reproduction'
    : "which the report's code calls: no run here can show the bug, and a script without it would not be the reporter's code";
  return `The environment lacks ${names}, ${what}. Setting \`environment.packages\` in .github/repgen.yml can fix it.`;
}

export type FrameworkVerdict = { ok: true } | { ok: false; reason: string };

/** Where a script's calls go, by module: "torch (`K.log` → `torch.log`, `K.mean` → `torch.mean`)". */
function describeCalls(calls: ResolvedCall[]): string {
  const byRoot = new Map<string, ResolvedCall[]>();
  for (const c of calls) {
    const root = c.resolved.split('.')[0] ?? c.resolved;
    const list = byRoot.get(root) ?? [];
    if (!list.some((x) => x.resolved === c.resolved)) list.push(c);
    byRoot.set(root, list);
  }
  return [...byRoot]
    .slice(0, 3)
    .map(([root, list]) => {
      const aliased = list.filter((c) => c.written !== c.resolved).slice(0, 3);
      return aliased.length ? `${root} (${aliased.map((c) => `\`${c.written}\` → \`${c.resolved}\``).join(', ')})` : root;
    })
    .join(', ');
}

/**
 * A reproduction runs the report's own framework or project: the script must import one of the report's subjects
 * and call into it (a call, a base class or a decorator, resolved through the script's imports and aliases). What a
 * name is bound to decides, never the name: `import torch as K` then `K.mean(x)` is PyTorch, whatever the report's
 * Keras code called `K`. Nothing is required of a report with no subject (no framework, no project).
 */
export async function checkFramework(script: string, subjects: readonly string[]): Promise<FrameworkVerdict> {
  if (!subjects.length) return { ok: true };
  const { imported, calls } = await resolveScriptCalls(script);
  const ours = calls.filter((c) => subjects.some((s) => inSubject(c.resolved, s)));
  if (ours.length) return { ok: true };
  const about = subjects.map((s) => `\`${s}\``).join(' / ');
  const importsOne = imported.some((m) => subjects.some((s) => inSubject(m, s)));
  const elsewhere = describeCalls(calls);
  const what = importsOne
    ? 'imports it but never calls into it'
    : `never imports it${imported.length ? ` (it imports ${[...new Set(imported.map((m) => m.split('.')[0]))].join(', ')})` : ''}`;
  return {
    ok: false,
    reason:
      `the report is about ${about}, and the script ${what}${elsewhere ? `; its calls go to ${elsewhere}` : ''}. ` +
      `Write the reproduction with ${about}, as the report does: a script in another framework is not a reproduction`,
  };
}

/** What tier 1 makes of a script before it runs: another framework, or the environment lacking the report's own. */
export interface FrameworkScreen {
  outcome: 'irrelevant' | 'unavailable_here';
  stage: string;
  feedback: string;
  /** Set when the environment lacks what the report is about: tier 1 stops with exit_env, the model is told nothing. */
  envLacks?: string[];
}

/**
 * The modules a run cannot do without, by the name a missing-module probe knows: the roots of the report's imports
 * of each subject its code calls into (`from tensorflow import keras` needs `tensorflow`). A framework the code
 * imports and never calls (`import transformers` above a torch-only snippet) is no part of the bug, so lacking it
 * stops nothing; one reached only through a conventional name it never imports (`tf.constant`) is needed by name.
 * `reportPackages` are the other installable packages the report's code imports (`cv2`, `pandas`: the env's own
 * reading of its imports, never the reporter's local modules): one its code calls into is needed as well.
 */
export async function neededModules(
  facts: Pick<ReportFacts, 'frameworks' | 'pythonBlocks'>,
  projectPackages: readonly string[] = [],
  reportPackages: readonly string[] = [],
): Promise<string[]> {
  const { imported, calls } = await resolveScriptCalls(facts.pythonBlocks.join('\n'));
  const roots = new Set<string>();
  for (const s of reportSubjects(facts, projectPackages)) {
    const via = imported.filter((m) => inSubject(m, s));
    if (!via.length) roots.add(s);
    else if (calls.some((c) => inSubject(c.resolved, s))) for (const m of via) roots.add(m.split('.')[0] ?? m);
  }
  // Any other package the report's code imports and calls into (`cv2.resize`, `pd.read_csv`) is the reporter's code too.
  for (const p of reportPackages) if (imported.some((m) => inSubject(m, p)) && calls.some((c) => inSubject(c.resolved, p))) roots.add(p);
  return [...roots];
}

/**
 * The framework stage of tier 1: a script that calls none of the report's subjects is irrelevant, whatever it
 * binds; a relevant one importing a subject the report calls and the interpreter lacks ends tier 1 as the
 * environment's failure, never with feedback steering the model off the package. Null when the script may go on.
 */
export async function screenFramework(
  script: string,
  report: Pick<ReportResult, 'facts'>,
  projectPackages: readonly string[] | undefined,
  missing: readonly string[],
  reportPackages: readonly string[] = [],
): Promise<FrameworkScreen | null> {
  const subjects = reportSubjects(report.facts, projectPackages);
  const verdict = await checkFramework(script, subjects);
  if (!verdict.ok)
    return { outcome: 'irrelevant', stage: 'relevance (framework)', feedback: `Not relevant to the report: ${verdict.reason}.` };
  const needed = await neededModules(report.facts, projectPackages, reportPackages);
  const lacked = missing.filter((m) => needed.includes(m));
  if (lacked.length)
    return { outcome: 'unavailable_here', stage: 'environment', feedback: lackedSubjectsSentence(lacked, subjects), envLacks: lacked };
  return null;
}

/**
 * Before any tier runs: the modules the report's code needs that the interpreter lacks (`missingOf` probes them).
 * Empty when the report itself shows an import failure, which may be the bug.
 */
export async function lackedReportSubjects(
  report: Pick<ReportResult, 'facts' | 'reading'>,
  missingOf: (modules: string[]) => Promise<string[]>,
  projectPackages: readonly string[] = [],
  reportPackages: readonly string[] = [],
): Promise<string[]> {
  if (report.reading.expected.some((x) => x.kind === 'import_error')) return [];
  const needed = await neededModules(report.facts, projectPackages, reportPackages);
  return needed.length ? (await missingOf(needed)).filter((m) => needed.includes(m)) : [];
}
