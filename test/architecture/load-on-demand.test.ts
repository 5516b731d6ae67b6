import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/** A resolve hook that prints every module the import resolves, as the process really loads them (tsx and all). */
const HOOK =
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }";

/**
 * What importing `file` loads, in a fresh node with tsx, as bin/repgen.js runs it: npm packages by name, our own
 * modules by repo path. Type-only imports are erased, so only what runs is seen; a static import graph would count them.
 */
async function loadsOf(file: string): Promise<{ packages: Set<string>; modules: Set<string> }> {
  const code = [
    "import { register } from 'node:module';",
    `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`,
    `await import(${JSON.stringify(pathToFileURL(join(root, file)).href)});`,
  ].join('\n');
  const { stderr } = await run(process.execPath, ['--import', 'tsx/esm', '--input-type=module', '-e', code], { cwd: root });
  const packages = new Set<string>();
  const modules = new Set<string>();
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('LOADED file://')) continue;
    const path = fileURLToPath(line.slice('LOADED '.length));
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (pkg) packages.add(pkg[1] ?? '');
    else if (path.startsWith(`${root}/`)) modules.add(path.slice(root.length + 1));
  }
  return { packages, modules };
}

/** The SDKs a local no-model run never uses: each is loaded by the adapter factory that needs it (STYLE habit 3). */
const KUBERNETES = '@kubernetes/client-node';
const MODELS = '@huggingface/transformers';
const APP = ['probot', 'bullmq', 'ioredis'];

describe('a command loads only what it uses (issue 42: start fast)', () => {
  it('`repgen reproduce` loads the pipeline only after its first progress lines, and no SDK it does not use', async () => {
    const { packages, modules } = await loadsOf('src/commands/reproduce.ts');
    expect(modules.has('src/commands/reproduce.ts')).toBe(true);
    expect(packages).toContain('zod'); // the hook sees packages at all
    expect(modules).not.toContain('src/pipeline/reproduce-issue.ts');
    expect(modules).not.toContain('src/pipeline/run-repro.ts');
    for (const sdk of [KUBERNETES, MODELS, ...APP]) expect(packages).not.toContain(sdk);
  });

  it.each(['src/pipeline/reproduce-issue.ts', 'src/commands/run.ts', 'src/commands/bench.ts', 'src/commands/context.ts'])(
    '%s loads neither the Kubernetes client (only for a Kubernetes executor) nor transformers.js (only for a model) nor the App',
    async (file) => {
      const { packages, modules } = await loadsOf(file);
      expect(modules.has(file)).toBe(true);
      for (const sdk of [KUBERNETES, MODELS, ...APP]) expect(packages).not.toContain(sdk);
    },
  );

  it('the worker loads BullMQ and Probot, but not the Kubernetes client or transformers.js', async () => {
    const { packages } = await loadsOf('workers/repro-worker.ts');
    expect(packages).toContain('bullmq');
    for (const sdk of [KUBERNETES, MODELS]) expect(packages).not.toContain(sdk);
  });
});
