// `npm run build`, and `prepare` (which `npm ci` runs): compiles src/ and workers/ to dist/ with tsc, copies what
// they read beside them (plain .mjs modules, data files, prompts/, package.json), and stamps the build, so that
// bin/repgen.js runs compiled JavaScript instead of loading every TypeScript module through tsx at each start
// (issue 42). Plain JavaScript: it runs before anything is built. Where there is nothing to build from (a
// dependency-only install, as the Dockerfile's deps stage) or no TypeScript (npm ci --omit=dev), it says so and
// exits 0: bin/repgen.js then runs the sources through tsx, as it does whenever dist/ is stale.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const say = (line) => process.stderr.write(`repgen build: ${line}\n`);
const startedMs = Date.now();

if (!existsSync(join(root, 'src', 'cli.ts'))) {
  say('no sources here (a dependency-only install): nothing to build');
  process.exit(0);
}
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  say('TypeScript is not installed (npm ci --omit=dev): not built; bin/repgen.js runs the sources through tsx');
  process.exit(0);
}

// A clean build: a source removed since the last one must not leave its compiled file behind.
rmSync(dist, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  // No stamp: bin/repgen.js keeps running the sources through tsx.
  say(`tsc failed (exit ${r.status ?? r.signal}): dist/ is not stamped`);
  process.exit(1);
}

/** Copies every file under `dir` that tsc does not emit (anything but .ts sources and declarations). */
function copyAssets(dir) {
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) copyAssets(rel);
    else if (!/\.(ts|mts|cts)$/.test(name)) {
      mkdirSync(join(dist, dir), { recursive: true });
      cpSync(join(root, rel), join(dist, rel));
    }
  }
}
copyAssets('src');
copyAssets('workers');
// The compiled modules find these where the sources do: two folders up from src/<unit>/.
cpSync(join(root, 'prompts'), join(dist, 'prompts'), { recursive: true });
cpSync(join(root, 'package.json'), join(dist, 'package.json'));
writeFileSync(join(dist, '.built.json'), `${JSON.stringify({ startedMs })}\n`);
say(`dist/ built in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`);
