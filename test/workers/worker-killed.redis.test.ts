import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readdirSync, rmSync } from 'node:fs';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunPipeline } from '../../src/queue/process-repro-job.js';
import { REPRO_QUEUE } from '../../src/queue/repro-job.js';
import { commentPayload, postWebhook } from '../github/webhook-fixtures.js';
import { makeGitRepo, reproducedOutcome, SECRET, startHarness, type Harness } from './harness.js';
import { waitFor } from '../helpers/poll.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * A worker killed mid-job (SIGKILL: no cleanup, no goodbye). BullMQ's stalled-job check hands the job to a
 * new worker, which finishes it; when restarts are exhausted the issue still gets its final word.
 */
const FAST_STALL = { REPGEN_LOCK_MS: '1500', REPGEN_STALLED_INTERVAL_MS: '700' };

let h: Harness;
let repo: ReturnType<typeof makeGitRepo>;
const children: ChildProcess[] = [];

// Each test has its own harness and queue prefix, and its stuck workers are killed after it.
beforeAll(() => {
  repo = makeGitRepo();
});
afterAll(() => {
  repo?.cleanup();
});
beforeEach(async () => {
  h = await startHarness('killed', {
    github: { issues: { 301: { title: 't', body: 'b' }, 302: { title: 't', body: 'b' }, 303: { title: 't', body: 'b' } } },
    env: FAST_STALL,
  });
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await h?.close();
});

function searchableTempDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  chmodSync(dir, 0o755);
  return dir;
}

async function startStuckWorker(extraEnv: Record<string, string>): Promise<{ child: ChildProcess; started: Promise<string> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/workers/fixtures/stuck-worker.ts'], {
    env: {
      ...process.env,
      APP_ID: '1',
      PRIVATE_KEY: h.env.PRIVATE_KEY ?? '',
      REPGEN_QUEUE_PREFIX: h.prefix,
      REPGEN_GITHUB_THROTTLE: 'false',
      FAKE_GITHUB_URL: h.gh.url,
      LOG_LEVEL: 'fatal',
      ...FAST_STALL,
      // The SIGKILLed worker leaves its job folder behind, by design: in a folder of the test's own. So too the
      // throwaway dir of a sandbox probe the kill lands in (its work root, searchable by the sandbox's uid).
      REPGEN_WORKDIR: makeTempDir('repgen-killed-work-'),
      REPGEN_WORK_ROOT: searchableTempDir('repgen-killed-runs-'),
      ...extraEnv,
    } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  const started = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(/STARTED (\S+)/);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`stuck worker exited early (${code})`)));
  });
  await waitFor(() => out.includes('READY'), { what: 'stuck worker ready' });
  return { child, started };
}

const progressBody = (n: number) =>
  [...h.gh.comments.values()].find((c) => c.issue === n && c.body.includes('repgen:progress'))?.body ?? '';
/** Waits for the progress comment to match `re` and returns the body that matched: the test asserts on what it waited for. */
const progressMatching = (n: number, re: RegExp, what: string) =>
  waitFor(
    () => {
      const body = progressBody(n);
      return re.test(body) ? body : null;
    },
    { what },
  );

// Each test spawns worker processes under tsx and waits on BullMQ's stalled-job check: slow on a busy machine, not wrong.
describe('a worker killed mid-job', () => {
  it('is replaced: the job is retried by another worker and the issue gets its result; its folder is reaped', async () => {
    const workdir = makeTempDir('killed-wd-');
    const { child, started } = await startStuckWorker({ REPGEN_WORKDIR: workdir });
    await postWebhook(
      h.app.url,
      'issue_comment',
      commentPayload('/repgen', { issueNumber: 301, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    const jobId = await started;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The SIGKILLed worker left its job folder and the marker naming it as the owner.
    const left = readdirSync(workdir).filter((n) => n.startsWith('repgen-job-') && !n.endsWith('.owner'));
    expect(left).toHaveLength(1);
    const runs: string[] = [];
    const seen: string[][] = [];
    const pipeline: RunPipeline = async (req) => {
      runs.push(req.jobId);
      seen.push(readdirSync(workdir));
      return reproducedOutcome();
    };
    const w = await h.startWorker(pipeline, { REPGEN_WORKDIR: workdir }, { reapMinAgeMs: 0 });
    await waitFor(() => /Reproduced/.test(progressBody(301)), { what: 'final word after the kill' });
    await w.close(0);
    expect(runs).toEqual([jobId]);
    // Reaped at start (before the retry ran); the live job's own folder was there during its run, gone after.
    expect(seen[0]).not.toContain(left[0]);
    expect(seen[0]?.filter((n) => n.startsWith('repgen-job-') && !n.endsWith('.owner'))).toHaveLength(1);
    expect(readdirSync(workdir)).toEqual([]);
    rmSync(workdir, { recursive: true, force: true });
    expect(h.gh.labels.get(301)).toEqual(['repro:confirmed']);
  }, 180_000);

  it('when restarts are exhausted, the comment says the worker stopped', async () => {
    const { child, started } = await startStuckWorker({ REPGEN_MAX_STALLED: '0' });
    await postWebhook(
      h.app.url,
      'issue_comment',
      commentPayload('/repgen', { issueNumber: 302, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    await started;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    let ran = false;
    const w = await h.startWorker(
      async () => {
        ran = true;
        return reproducedOutcome();
      },
      { REPGEN_MAX_STALLED: '0' },
    );
    const body = await progressMatching(302, /could not finish/, 'final failure word');
    await w.close(0);
    expect(ran).toBe(false);
    expect(body).toContain('the worker running it stopped');
    // One run, cut short; BullMQ's pick-up that only fails the job is no attempt (attemptsStarted says 2).
    expect(body).toContain('after 1 attempt (the worker running it stopped in it)');
    expect(await h.redis.exists(`${h.prefix}:active:codertocat/hello-world#302`)).toBe(0);
  }, 180_000);

  it('counts only the runs that happened: two killed workers are 2 attempts, not 3', async () => {
    const stall = { REPGEN_MAX_STALLED: '1' };
    const first = await startStuckWorker(stall);
    await postWebhook(
      h.app.url,
      'issue_comment',
      commentPayload('/repgen', { issueNumber: 303, sender: { login: 'Codertocat' }, cloneUrl: repo.path }),
      { secret: SECRET },
    );
    const jobId = await first.started;
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    // The second stuck worker's stalled check hands it the job again; then it dies too.
    const second = await startStuckWorker(stall);
    expect(await second.started).toBe(jobId);
    expect(progressBody(303)).toContain('restarted: try 2');
    second.child.kill('SIGKILL');
    await new Promise((r) => second.child.once('exit', r));
    let ran = false;
    const w = await h.startWorker(async () => {
      ran = true;
      return reproducedOutcome();
    }, stall);
    const body = await progressMatching(303, /could not finish/, 'final failure word');
    await w.close(0);
    expect(ran).toBe(false);
    const queue = new Queue(REPRO_QUEUE, { connection: h.redis, prefix: h.prefix });
    const job = await queue.getJob(jobId);
    await queue.close();
    // What BullMQ itself says: started 3 times (the last only to fail it), stalled twice.
    expect(job?.attemptsStarted).toBe(3);
    expect(job?.stalledCounter).toBe(2);
    expect(body).toContain('after 2 attempts (the worker running it stopped in all of them)');
  }, 180_000);
});
