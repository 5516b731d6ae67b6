/**
 * Prints the bench table of docs/benchmarks.md from recorded real-model sessions (no model, no sandbox):
 *
 *   npx tsx scripts/bench/cassette-table.ts [fixtures/cassettes/dl-bugs]
 *
 * Pass 1 is `<case>.json` (tier 0 then tier 1), pass 2 is `<case>.r2.json` (REPGEN_TIER0=0). Every file is
 * parsed with the cassette schema, so a file that is not a cassette fails loudly instead of being skipped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cassette } from '../../src/cassettes/schema.js';
import { cassetteTable } from '../../src/cassettes/table.js';

const dir = process.argv[2] ?? 'fixtures/cassettes/dl-bugs';
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, cassette: Cassette.parse(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }));
process.stdout.write(cassetteTable(files));
