import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { readAppEnv, type AppEnv } from '../../src/config/app-env.js';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import type { ScriptExecutor } from '../../src/exec/types.js';
import type { LlmClient } from '../../src/llm/types.js';
import type { RunStages } from '../../src/pipeline/ports.js';
import type { BuildContextFn } from '../../src/pipeline/run-repro.js';
import { FakeExecutor } from '../fakes/fake-executor.js';
import type { RunPipeline } from '../../src/queue/process-repro-job.js';
import type { RunFixCheck } from '../../src/github/process-verify-job.js';
import { silentLogger } from '../../src/log.js';
import type { ReproOutcome } from '../../src/pipeline/types.js';
import { startAppServer, type AppServerHandle } from '../../workers/app-server.js';
import { startReproWorker, type ReproWorkerHandle } from '../../workers/repro-worker.js';
import { startFakeGithub, type FakeGithub, type FakeGithubOptions } from '../github/fake-github.js';
import { testPrivateKey } from '../github/webhook-fixtures.js';
import { makeTempDir } from '../helpers/temp-dir.js';

export const SECRET = 'worker-test-secret';

/** A real git repository with one commit, cloned by the worker like a GitHub repo. */
export function makeGitRepo(files: Record<string, string> = { 'model.py': 'import torch\n' }): {
  path: string;
  sha: string;
  cleanup: () => void;
} {
  const path = makeTempDir('repgen-test-repo-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(path, name), content);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: path,
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    })
      .toString()
      .trim();
  git('init', '-q', '-b', 'master');
  git('add', '.');
  git('commit', '-q', '-m', 'init');
  return { path, sha: git('rev-parse', 'HEAD'), cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Harness {
  gh: FakeGithub;
  app: AppServerHandle;
  redis: Redis;
  env: AppEnv;
  prefix: string;
  /** A worker whose stages 1-5 are `pipeline`: a scripted one, or null for the real stages with `extra`'s executor and model. */
  startWorker: (pipeline: RunPipeline | null, overrides?: Record<string, string>, extra?: WorkerExtras) => Promise<ReproWorkerHandle>;
  close: () => Promise<void>;
}

export interface WorkerExtras {
  runFixCheck?: RunFixCheck;
  workRoots?: string[];
  reapMinAgeMs?: number;
  lostRunGraceMs?: number;
  executor?: ScriptExecutor;
  llm?: LlmClient | null;
  buildContext?: BuildContextFn | null;
  stages?: RunStages;
}

export async function startHarness(
  name: string,
  opts: { github?: FakeGithubOptions; env?: Record<string, string> } = {},
): Promise<Harness> {
  // One prefix per harness: a test that starts its own harness shares no queue, lock or record with another.
  const prefix = `repgen-test-${name}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const clean = async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  };
  await clean();
  const gh = await startFakeGithub({ roles: { Codertocat: 'admin' }, ...opts.github });
  const baseEnv: NodeJS.ProcessEnv = {
    APP_ID: '1',
    PRIVATE_KEY: testPrivateKey(),
    WEBHOOK_SECRET: SECRET,
    REPGEN_QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'fatal',
    REPGEN_GITHUB_THROTTLE: 'false',
    REPGEN_JOB_BACKOFF_MS: '10',
    ...opts.env,
  };
  const env = readAppEnv(baseEnv);
  const app = await startAppServer(env, { log: silentLogger, baseUrl: gh.url, port: 0, host: '127.0.0.1' });
  const workers: ReproWorkerHandle[] = [];
  return {
    gh,
    app,
    redis,
    env,
    prefix,
    startWorker: async (pipeline, overrides = {}, extra = {}) => {
      const w = await startReproWorker(readAppEnv({ ...baseEnv, ...overrides }), {
        operator: readOperatorEnv({ ...baseEnv, ...overrides }),
        ...(pipeline ? { runPipeline: pipeline } : {}),
        // A scripted pipeline runs no script: a fake executor keeps the worker from starting a real sandbox.
        executor: extra.executor ?? new FakeExecutor(() => ({ exitCode: 0, stdout: '', stderr: '' })),
        llm: extra.llm === undefined ? null : extra.llm,
        ...extra,
        log: silentLogger,
        baseUrl: gh.url,
        minEditIntervalMs: 20,
        slotRetryMs: 200,
      });
      workers.push(w);
      return w;
    },
    close: async () => {
      await Promise.all(workers.map((w) => w.close(0)));
      await app.close();
      await clean();
      await redis.quit();
      await gh.close();
    },
  };
}

/** A reproduced outcome as the pipeline returns it (the comment builder renders it). */
export function reproducedOutcome(script = 'import torch\ntorch.zeros(2, 3) @ torch.zeros(2, 3)\n'): ReproOutcome {
  const exception = { type: 'RuntimeError', message: 'mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)' };
  const symptom = {
    kind: 'shape_mismatch' as const,
    category: 'crash' as const,
    evidence: `RuntimeError: ${exception.message}`,
    exception,
  };
  return {
    status: 'reproduced',
    summary: 'The script raises the reported shape mismatch.',
    script,
    confirmation: { reproducedRuns: 3, totalRuns: 3 },
    expected: [symptom],
    observed: [symptom],
    match: { verdict: 'reproduced', score: 1, reasons: ['same exception class and message'] },
    metrics: [],
    outputExcerpt: `Traceback (most recent call last):\nRuntimeError: ${exception.message}`,
    environment: { python: '3.11', torch: '2.1' },
    attempts: [{ n: 1, tier: 0, bundle: null, outcome: 'reproduced', feedback: 'ran as reported', script }],
    needsInfo: [],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    durationMs: 1234,
  };
}
