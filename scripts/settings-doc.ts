// `npm run settings-doc`: writes the settings tables of docs/configuration.md from the zod schemas in src/config/.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsDoc } from '../src/config/settings-doc.js';

const path = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(path, withSettingsDoc(readFileSync(path, 'utf8')));
process.stdout.write(`wrote ${path.pathname}\n`);
