// `npm run schemas`: writes the JSON Schema of .github/repgen.yml from its zod schema (for editors and docs).
import { writeFileSync } from 'node:fs';
import { repoConfigJsonSchema } from '../src/config/repo-config.js';

const path = new URL('../schemas/repgen.schema.json', import.meta.url);
writeFileSync(path, `${JSON.stringify(repoConfigJsonSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${path.pathname}\n`);
