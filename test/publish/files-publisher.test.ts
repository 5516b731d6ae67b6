import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import type { RunReport } from '../../src/pipeline/ports.js';
import { filesPublisher } from '../../src/publish/files-publisher.js';
import { reproducedOutcome } from '../workers/harness.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let root: string;
beforeAll(async () => {
  root = makeTempDir('repgen-files-publisher-');
});
afterAll(async () => rm(root, { recursive: true, force: true }));

function report(script: string | null): RunReport {
  const outcome = { ...reproducedOutcome(script ?? undefined), script };
  return {
    source: 'issue.md',
    issue: { title: '', body: 'x' },
    evidence: { outcome, report: null, plan: null, probe: null, context: null, tier0: null, finalRun: null, confirm: null },
    checkout: null,
    spec: { caps: {} as RunReport['spec']['caps'], executor: 'fake', llm: 'none', notes: [] },
  };
}

describe('filesPublisher', () => {
  it('writes repro.py, evidence.json and comment.md, with secrets redacted, and says where', async () => {
    const out = join(root, 'out');
    const secret = 'sk-test-0123456789abcdef';
    const p = filesPublisher(out, [secret]);
    const published = await p.publish(report(`import torch\nKEY = '${secret}'\n`));
    expect(published.locations).toEqual([join(out, 'repro.py'), join(out, 'evidence.json'), join(out, 'comment.md')]);
    expect(p.written()?.script).toBe(join(out, 'repro.py'));
    for (const f of published.locations) expect(await readFile(f, 'utf8')).not.toContain(secret);
    expect(await readFile(join(out, 'repro.py'), 'utf8')).toContain('import torch');
  });

  it('writes no repro.py when there is no script', async () => {
    const out = join(root, 'no-script');
    const published = await filesPublisher(out, []).publish(report(null));
    expect(published.locations).toEqual([join(out, 'evidence.json'), join(out, 'comment.md')]);
  });

  it('a folder that cannot be written is one UsageError naming it', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'x');
    await expect(filesPublisher(join(file, 'sub'), []).publish(report('x = 1\n'))).rejects.toSatisfy(
      (e: unknown) => e instanceof UsageError && e.message.startsWith(`cannot write the results to '${join(file, 'sub')}'`),
    );
  });
});
