/**
 * Adds to cassettes recorded before `project.exports` was kept (docs/cassettes.md) what tier 0 reads as the checkout's
 * exports, read again from the same checkout (the recorded `project.workspace.hostPath`, a clean checkout at the
 * case's commit), so their replay needs no checkout. A cassette that already has exports, has no project, or whose
 * checkout is gone is left as it is and said so. Nothing else in the file changes; no recorded reply is touched.
 *
 *   npx tsx scripts/cassettes/add-project-exports.ts fixtures/cassettes/repo-env/*.json
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Cassette } from '../../src/cassettes/schema.js';
import { readProjectExports } from '../../src/workspace/project-exports.js';

for (const file of process.argv.slice(2)) {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const cassette = Cassette.parse(raw);
  const project = cassette.project;
  if (!project) console.log(`${file}: no project (not a session against a checkout); unchanged`);
  else if (project.exports) console.log(`${file}: already has exports; unchanged`);
  else if (!existsSync(project.workspace.hostPath)) console.log(`${file}: checkout ${project.workspace.hostPath} is gone; unchanged`);
  else {
    const exports = await readProjectExports(project.workspace);
    if (!exports) {
      console.log(`${file}: the workspace names no package; unchanged`);
      continue;
    }
    (raw.project as Record<string, unknown>).exports = exports;
    writeFileSync(file, `${JSON.stringify(Cassette.parse(raw), null, 1)}\n`);
    console.log(`${file}: ${Object.keys(exports).length} exports added`);
  }
}
