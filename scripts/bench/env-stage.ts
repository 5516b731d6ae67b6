/**
 * The env stage of a report with no repository, alone: spec, build or reuse, and the import proof (`prepareEnv` around
 * the default ports, as `repgen reproduce --issue` runs it), timed; one JSON line per report.
 *
 *   REPGEN_ENV_FIND_LINKS=/opt/wheels npx tsx scripts/bench/env-stage.ts --cache DIR ISSUE.md [ISSUE.md…]
 *
 * Run it twice in new processes on the same cache: the first builds (cold) where the cache has nothing, the second is
 * the reuse a later job of the same report pays. Needs the network for a cold build (PyPI).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { resolveRunSpec } from '../../src/pipeline/run-spec.js';
import { defaultEnvPorts } from '../../src/pipeline/stages/env/default-env-ports.js';
import { prepareEnv } from '../../src/pipeline/stages/env/index.js';
import { silentLogger } from '../../src/log.js';

const { values, positionals } = parseArgs({ options: { cache: { type: 'string' } }, allowPositionals: true });
if (!values.cache || positionals.length === 0) {
  console.error('usage: npx tsx scripts/bench/env-stage.ts --cache DIR ISSUE.md [ISSUE.md…]');
  process.exit(2);
}
const spec = resolveRunSpec(readOperatorEnv({ ...process.env, REPGEN_ENV_CACHE: values.cache }), null, {});
const { ports, note } = await defaultEnvPorts(spec.env, silentLogger);
if (!ports) throw new Error(note ?? 'no env ports (REPGEN_ENV=off?)');
for (const file of positionals) {
  const [title = '', ...body] = readFileSync(file, 'utf8').split('\n');
  const issue = { title: title.replace(/^#\s*/, ''), body: body.join('\n') };
  const started = performance.now();
  const stage = await prepareEnv({ issue, repoDir: null, checkout: null }, ports, () => undefined, new AbortController().signal);
  const ms = Math.round(performance.now() - started);
  const env = stage.kind === 'built' ? stage.env : null;
  const pins = env?.pins ?? {};
  console.log(
    JSON.stringify({
      report: file,
      stage: stage.kind,
      ms,
      reused: env?.cached ?? null,
      pins: Object.keys(pins).length,
      tensorflow: pins['tensorflow'] ?? null,
      numpy: pins['numpy'] ?? (env ? 'the base’s' : null),
      cuda: Object.keys(pins).filter((p) => p.startsWith('nvidia-')),
      candidates: stage.kind === 'built' ? (stage.candidates ?? []).map((c) => `${c.outcome}${c.change ? ` (${c.change})` : ''}`) : [],
    }),
  );
}
