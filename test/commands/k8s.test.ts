import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { command } from '../../src/commands/k8s.js';
import { SetupError, UsageError } from '../../src/errors.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const HOSTILE = makeHostileFiles();

/** What `repgen k8s …` would do: the CLI maps UsageError and SetupError to one line and exit 2. */
async function main(
  argv: string[],
  cli: { stdout: (t: string) => void; stderr: (t: string) => void; env: NodeJS.ProcessEnv; cwd: string },
): Promise<number> {
  try {
    return await command.run(argv.slice(1), cli);
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof SetupError)) throw err;
    cli.stderr(`repgen k8s: ${err.message}\n`);
    return 2;
  }
}

function io(env: NodeJS.ProcessEnv = {}, cwd = process.cwd()) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), env, cwd } };
}

describe('repgen k8s render', () => {
  const dir = makeTempDir('k8s-render-');
  writeFileSync(join(dir, 'repro.py'), 'import torch\nprint(torch.cuda.is_available())\n');

  it('prints the ConfigMap and the GPU Job it would apply', async () => {
    const t = io({ REPGEN_K8S_NAMESPACE: 'team-repro' }, dir);
    const code = await main(
      ['k8s', 'render', '--script', 'repro.py', '--gpu', '1', '--version', 'torch=2.2.1', '--setup', 'pip list'],
      t.io,
    );
    expect(code).toBe(0);
    const [cm, job] = parseAllDocuments(t.out.join('')).map((d) => d.toJS());
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.data['file-0']).toContain('torch.cuda.is_available()');
    expect(JSON.parse(cm.data['request.json']).setup).toEqual(['pip list']);
    expect(job.kind).toBe('Job');
    expect(job.metadata.namespace).toBe('team-repro');
    const c = job.spec.template.spec.containers[0];
    expect(c.image).toBe('pytorch/pytorch:2.2.2-cuda12.1-cudnn8-runtime');
    expect(c.resources.limits['nvidia.com/gpu']).toBe('1');
  });

  it('uses --image over the table', async () => {
    const t = io({}, dir);
    expect(await main(['k8s', 'render', '--script', 'repro.py', '--image', 'ghcr.io/me/img:1'], t.io)).toBe(0);
    expect(t.out.join('')).toContain('image: ghcr.io/me/img:1');
  });

  it.each([
    [['k8s', 'render'], /--script FILE is required/],
    [['k8s', 'render', '--script', 'missing.py'], /--script 'missing.py' does not exist/],
    [['k8s', 'render', '--script', HOSTILE.fifo], /--script '.*issue\.fifo' is a named pipe \(FIFO\), not a regular file/],
    [['k8s', 'render', '--script', '/dev/zero'], /--script '\/dev\/zero' is a character device, not a regular file/],
    [['k8s', 'render', '--script', 'repro.py', '--gpu', 'x'], /--gpu must be a number/],
    [['k8s', 'render', '--script', 'repro.py', '--version', 'torch'], /PKG=VER/],
    [['k8s', 'apply'], /unknown subcommand 'apply'/],
  ])('%j exits 2 with one line', async (argv, message) => {
    const t = io({}, dir);
    expect(await main(argv, t.io)).toBe(2);
    expect(t.err.join('')).toMatch(message);
    expect(t.err.join('').trim().split('\n')).toHaveLength(1);
  });

  it('reports a bad setting by name', async () => {
    const t = io({ REPGEN_K8S_IMAGES: 'not json' }, dir);
    expect(await main(['k8s', 'render', '--script', 'repro.py'], t.io)).toBe(2);
    expect(t.err.join('')).toMatch(/REPGEN_K8S_IMAGES/);
  });
});
