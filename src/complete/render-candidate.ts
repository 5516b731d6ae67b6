// One candidate's script: the imports and helpers tier 0 adds, the reporter's code with each definition inserted
// before the statement that first runs it, then the harness. Every added line carries the mark.
import type { Node } from 'web-tree-sitter';
import { CONVENTIONAL_IMPORTS } from '../context/conventions.js';
import type { Harness } from './harness.js';
import { NUMPY_HELPER, OUTPUT_HELPER, TARGETS_HELPER, TARGETS_LIKE_HELPER, exampleInputHelper, marked } from './python-helpers.js';
import type { Analysis } from './scope.js';
import type { Definition } from './synthesize.js';
import type { Candidate } from './types.js';

/** What every candidate of one completion shares. */
export interface RenderPlan {
  a: Analysis;
  /** The reporter's code after repair and substitution. */
  body: string;
  /** Import lines inferred for undefined names. */
  imports: string[];
  /** Helpers that substituted data needs (class/def source). */
  dataHelpers: string[];
  /** Definitions shared by all candidates, with the module-level statement index each goes before. */
  base: Definition[];
  baseAt: Map<string, number>;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The imports the added lines need and the body lacks, conventional imports first. */
function headerLines(plan: RenderPlan, defs: Definition[], harnessText: string, helpers: Set<string>): string[] {
  const { body, imports, dataHelpers } = plan;
  const header: string[] = [];
  const need = (line: string) => {
    if (!imports.includes(line) && !new RegExp(`^${escapeRegExp(line)}\\s*$`, 'm').test(body)) header.push(line);
  };
  const allText = `${defs.map((d) => d.lines.join('\n')).join('\n')}\n${harnessText}\n${dataHelpers.join('\n')}`;
  const hasImport = (mod: string) =>
    new RegExp(`^\\s*import ${mod}\\s*(?:$|,|#| as )`, 'm').test(body) || imports.some((i) => i === `import ${mod}`);
  if ((helpers.size || /\btorch\./.test(allText)) && !hasImport('torch')) need('import torch');
  if (
    (helpers.has('example_input') || /\bnn\./.test(allText)) &&
    !/^\s*(?:import torch\.nn as nn|from torch import nn)\b/m.test(body) &&
    !imports.includes(CONVENTIONAL_IMPORTS.nn ?? '')
  )
    need('import torch.nn as nn');
  if (/\bDataLoader\(/.test(allText) && !/\bimport\b[^\n]*\bDataLoader\b/.test(body) && !imports.some((i) => /DataLoader/.test(i)))
    need('from torch.utils.data import DataLoader');
  if (/\bTensorDataset\(/.test(allText) && !/\bimport\b[^\n]*\bTensorDataset\b/.test(body) && !imports.some((i) => /TensorDataset/.test(i)))
    need('from torch.utils.data import TensorDataset');
  if (/\bnp\./.test(allText) && !/^\s*import numpy as np\b/m.test(body) && !imports.includes('import numpy as np'))
    need('import numpy as np');
  if (helpers.has('types')) need('import types');
  if (dataHelpers.length && !hasImport('torchvision')) need('import torchvision');
  const order = Object.values(CONVENTIONAL_IMPORTS);
  const imps = [...imports].sort((x, y) => order.indexOf(x) - order.indexOf(y));
  return [...imps, ...header];
}

/** Renders one candidate: with harness `h`, or the reporter's code completed alone when `h` is null. */
export function renderCandidate(plan: RenderPlan, h: Harness | null): Candidate {
  const { a, body, dataHelpers, base, baseAt } = plan;
  const added: string[] = [];
  const defs = [...base, ...(h?.defs ?? [])];
  const helpers = new Set<string>(defs.flatMap((d) => d.helpers));
  const harnessText = h ? [...h.lines, ...h.defs.flatMap((d) => d.lines)].join('\n') : '';
  if (/repgen_example_input/.test(harnessText)) helpers.add('example_input');
  const top = headerLines(plan, defs, harnessText, helpers);
  const helperText = [
    ...(helpers.has('example_input') ? [exampleInputHelper(body)] : []),
    ...(helpers.has('targets') ? [TARGETS_HELPER] : []),
    ...(helpers.has('output') ? [OUTPUT_HELPER] : []),
    ...(helpers.has('targets_like') ? [TARGETS_LIKE_HELPER] : []),
    ...(helpers.has('numpy') ? [NUMPY_HELPER] : []),
    ...dataHelpers,
  ];
  const lines: string[] = [];
  for (const l of top) {
    lines.push(...marked(l));
    added.push(...l.split('\n'));
  }
  for (const ht of helperText) {
    lines.push(...marked(ht));
    added.push(...ht.split('\n'));
  }
  if (lines.length) lines.push('');
  // The reporter's code, statement by statement, with definitions inserted before their first run.
  const at = new Map<number, Definition[]>();
  for (const d of base) {
    const i = baseAt.get(d.name) ?? a.statements.length;
    at.set(i, [...(at.get(i) ?? []), d]);
  }
  const srcLines = body.replace(/\s+$/, '').split('\n');
  const emit = (defsHere: Definition[] | undefined) => {
    for (const d of defsHere ?? []) {
      lines.push(...marked(d.lines.join('\n')));
      added.push(...d.lines);
    }
  };
  let row = 0;
  const cuts = [...at.keys()].filter((i) => i < a.statements.length).sort((x, y) => x - y);
  for (const i of cuts) {
    const startRow = (a.statements[i] as Node).startPosition.row;
    lines.push(...srcLines.slice(row, startRow));
    emit(at.get(i));
    row = startRow;
  }
  lines.push(...srcLines.slice(row));
  const tail = at.get(a.statements.length);
  if (tail?.length || h) lines.push('');
  emit(tail);
  if (h) {
    emit(h.defs);
    lines.push(...marked(h.lines.join('\n')));
    added.push(...h.lines);
  }
  return { script: `${lines.join('\n').replace(/^\n+/, '')}\n`, label: h?.label ?? "the report's code, completed", added };
}
