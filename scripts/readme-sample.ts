// Rewrites the README's sample comment from fixtures/outcomes/readme-sample.json (the outcome of
// `repgen reproduce --issue fixtures/bench/dl-bugs/so-046/issue.md --llm none`), rendered by the comment builder.
// test/publish/readme-sample.test.ts fails when the README differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReproOutcome } from '../src/pipeline/types.js';
import { buildResultComment } from '../src/publish/build-result-comment.js';
import { readmeSample, replaceReadmeSample } from '../src/publish/readme-sample.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outcome = ReproOutcome.parse(JSON.parse(readFileSync(join(root, 'fixtures/outcomes/readme-sample.json'), 'utf8')));
const readme = join(root, 'README.md');
writeFileSync(readme, replaceReadmeSample(readFileSync(readme, 'utf8'), readmeSample(buildResultComment(outcome))));
console.log(`wrote the sample comment into ${readme}`);
