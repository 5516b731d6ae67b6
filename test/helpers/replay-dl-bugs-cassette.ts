import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Cassette, cassetteOutcome, replayCassette, replaySettings } from '../../src/cassettes/index.js';
import { silentLogger } from '../../src/log.js';
import { CANDIDATE_PROMPT_MARK } from '../../src/pipeline/stages/candidate-fix/candidate-prompt.js';
import { runReproWithEvidence } from '../../src/pipeline/run-repro.js';
import { ReproSettings } from '../../src/pipeline/settings.js';

/** The recorded real-model sessions of the dl-bugs dev cases (docs/cassettes.md). */
export const DL_BUGS_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/dl-bugs');
/** Those of the Keras/TensorFlow cases (fixtures/bench/dl-bugs-keras), each run in the TensorFlow env RepGen built. */
export const DL_BUGS_KERAS_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/dl-bugs-keras');
/** Those of the fail-to-pass cases, against timm's checkout at each case's buggy commit. */
export const REPO_F2P_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/repo-f2p');
/** The same cases recorded with tier 0 on (the product's default), issue 40's rules in place. */
export const REPO_F2P_TIER0_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/repo-f2p-tier0');
/** Those of the repo-env cases (einops, kornia, torchmetrics, …), each in the env RepGen built at the buggy commit. */
export const REPO_ENV_CASSETTES = join(import.meta.dirname, '../../fixtures/cassettes/repo-env');

/** Their file names, sorted. */
export function dlBugsCassetteFiles(dir = DL_BUGS_CASSETTES): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

export function readDlBugsCassette(file: string, dir = DL_BUGS_CASSETTES): Cassette {
  return Cassette.parse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
}

/** Replays one session through the real pipeline with the recorded model replies, runs and static checks. */
export async function replayThroughPipeline(cassette: Cassette) {
  const replay = replayCassette(cassette);
  // A session against a project's checkout gets the workspace it saw and the context it was given; neither is read from disk.
  const project = cassette.project;
  const evidence = await runReproWithEvidence(
    {
      issue: { title: '', body: cassette.issueText },
      settings: ReproSettings.parse(replaySettings(cassette)),
      ...(project ? { repoDir: project.repoDir, workspace: project.workspace } : {}),
    },
    {
      ...(project?.context ? { buildContext: async () => project.context as NonNullable<typeof project.context> } : {}),
      // The checkout's exports as recorded (none when the recording kept none): the replay never reads the checkout.
      ...(project ? { projectExports: async () => project.exports } : {}),
      executor: replay.executor,
      llm: replay.llm,
      llmReason: 'cassette',
      checker: replay.checker,
      patchedCopies: replay.copies,
      progress: () => undefined,
      log: silentLogger,
    },
  );
  return { replay, evidence };
}

/**
 * Replays a session and checks it against its recording: no drift, the same status, verdict, tier, attempts and
 * confirmation, every recorded model reply used. A candidate-fix request whose text changed is reported
 * (`replay.tolerated`), not drift (docs/cassettes.md). `candidateChanged` names a case whose candidate step no longer
 * goes as recorded for a stated reason (a patch it refused is now tried): everything before the step must still
 * replay exactly, and the step must differ (so a stale entry fails); what the step concludes is then not checked.
 * Returns what the replay concluded.
 */
export async function expectReplayAsRecorded(cassette: Cassette, options: { candidateChanged?: string } = {}) {
  const { replay, evidence } = await replayThroughPipeline(cassette);
  const candidateCalls = cassette.calls.filter((c) => c.request.messages[0]?.content.includes(CANDIDATE_PROMPT_MARK)).length;
  if (options.candidateChanged) {
    expect(replay.drift.filter((d) => !d.candidateStep)).toEqual([]);
    const differs = replay.drift.length > 0 || replay.callsServed() !== cassette.calls.length;
    expect(differs, `listed as changed (${options.candidateChanged}) but replays as recorded: take it off the list`).toBe(true);
    expect(replay.callsServed()).toBeGreaterThanOrEqual(cassette.calls.length - candidateCalls + 1);
  } else {
    expect(replay.drift).toEqual([]);
    expect(replay.callsServed()).toBe(cassette.calls.length);
  }
  for (const t of replay.tolerated) expect(t).toMatchObject({ port: 'llm', candidateStep: true });
  const replayed = cassetteOutcome(evidence.outcome, cassette.outcome.judge);
  const { status, verdict, tier, attempts, confirmation } = replayed;
  const recorded = cassette.outcome;
  expect({ status, verdict, tier, attempts, confirmation }).toEqual({
    status: recorded.status,
    verdict: recorded.verdict,
    tier: recorded.tier,
    attempts: recorded.attempts,
    confirmation: recorded.confirmation,
  });
  return { replayed, evidence, replay };
}
