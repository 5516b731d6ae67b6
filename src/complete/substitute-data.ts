// Data and notebook-only code that exist only on the reporter's machine, swapped for what a script run has.
import { FAKE_IMAGE_FOLDER, TQDM_NOTEBOOK_FALLBACK, marked } from './python-helpers.js';

/** Data that lives only on the reporter's machine, swapped for synthetic data of the same kind. */
export function substituteData(code: string): { code: string; edits: string[]; helpers: string[] } {
  const re = /\b(?:torchvision\.)?(?:datasets\.)?ImageFolder\s*\(/g;
  if (!re.test(code)) return { code, edits: [], helpers: [] };
  const edits = [
    "replaced `ImageFolder` (a folder of images on the reporter's machine) with random images through " +
      "the report's own transforms (`RepgenFakeImages`, torchvision's FakeData)",
  ];
  let out = code.replace(re, 'RepgenFakeImages(');
  // Worker processes only add start-up time once the data is generated in memory.
  const workers = /\bnum_workers\s*=\s*[1-9]\d*/g;
  if (workers.test(out)) {
    out = out.replace(workers, 'num_workers=0');
    edits.push(
      'set `num_workers=0` in the DataLoader: the synthetic images are made in memory, so worker processes would only add start-up time',
    );
  }
  return { code: out, edits, helpers: [FAKE_IMAGE_FOLDER] };
}

/** `from tqdm import notebook`: there is no notebook in a script run; the console bar (or none) stands in. */
export function substituteNotebook(code: string): { code: string; edits: string[] } {
  const re = /^from tqdm import notebook\s*$/m;
  if (!re.test(code)) return { code, edits: [] };
  return {
    code: code.replace(re, marked(TQDM_NOTEBOOK_FALLBACK).join('\n')),
    edits: ['replaced `from tqdm import notebook` with the console progress bar: a script run has no notebook'],
  };
}
