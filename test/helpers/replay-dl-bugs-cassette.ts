import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cassette, replayCassette } from '../../src/cassettes/index.js';
import { silentLogger } from '../../src/log.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';

/** The recorded real-model sessions of the dl-bugs dev cases (docs/cassettes.md). */
export const DL_BUGS_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/dl-bugs');

/** Their file names, sorted. */
export function dlBugsCassetteFiles(): string[] {
  return readdirSync(DL_BUGS_CASSETTES)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

export function readDlBugsCassette(file: string): Cassette {
  return Cassette.parse(JSON.parse(readFileSync(join(DL_BUGS_CASSETTES, file), 'utf8')));
}

/** Replays one session through the real pipeline with the recorded model replies, runs and static checks. */
export async function replayThroughPipeline(cassette: Cassette) {
  const replay = replayCassette(cassette);
  const evidence = await runReproWithEvidence(
    { issue: { title: '', body: cassette.issueText }, settings: ReproSettings.parse(cassette.settings) },
    {
      executor: replay.executor,
      llm: replay.llm,
      llmReason: 'cassette',
      checker: replay.checker,
      progress: () => undefined,
      log: silentLogger,
    },
  );
  return { replay, evidence };
}
