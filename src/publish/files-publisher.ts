import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import type { Published, ResultPublisher, RunReport } from '../pipeline/ports.js';
import type { ReproEvidence } from '../pipeline/run-repro.js';
import { buildResultComment } from './build-result-comment.js';
import { redactSecrets } from './neutralize.js';

/** What a run leaves on disk. */
export interface ReproFiles {
  /** OUT/repro.py; null when the run produced no script. */
  script: string | null;
  evidence: string;
  comment: string;
}

/** The result as files: OUT/repro.py, OUT/evidence.json, OUT/comment.md (`repgen reproduce`, a bench case). */
export function filesPublisher(outDir: string, secrets: readonly string[]): ResultPublisher & { written: () => ReproFiles | null } {
  let written: ReproFiles | null = null;
  return {
    written: () => written,
    progress: async () => undefined,
    publish: async (report: RunReport): Promise<Published> => {
      written = await writeReproFiles(outDir, report.evidence, secrets);
      return { locations: [written.script, written.evidence, written.comment].filter((f): f is string => f !== null) };
    },
    // A run without a result writes nothing: no half-written files to mistake for one.
    end: async () => undefined,
  };
}

/** Writes OUT/repro.py (when there is a script), OUT/evidence.json and OUT/comment.md. Returns their paths. */
export async function writeReproFiles(outDir: string, evidence: ReproEvidence, secrets: readonly string[]): Promise<ReproFiles> {
  try {
    return await writeAll(outDir, evidence, secrets);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot write the results to '${outDir}': ${code ?? (err instanceof Error ? err.message : String(err))}`);
  }
}

async function writeAll(outDir: string, evidence: ReproEvidence, secrets: readonly string[]): Promise<ReproFiles> {
  await mkdir(outDir, { recursive: true });
  const script = evidence.outcome.script ? join(outDir, 'repro.py') : null;
  if (script && evidence.outcome.script) await writeFile(script, redactSecrets(evidence.outcome.script, secrets));
  const evidencePath = join(outDir, 'evidence.json');
  await writeFile(evidencePath, `${redactSecrets(JSON.stringify(evidence, null, 2), secrets)}\n`);
  const comment = join(outDir, 'comment.md');
  await writeFile(comment, buildResultComment(evidence.outcome, { secrets, evidenceRef: 'evidence.json' }));
  return { script, evidence: evidencePath, comment };
}
