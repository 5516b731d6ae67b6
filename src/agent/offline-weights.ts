// Pretrained weights need the network, which runs here do not have. Where what the report checks cannot depend on
// the weights' values (a crash, a shape, how many outputs), random weights show the same bug.
import type { Symptom } from '../symptoms/types.js';

const PRETRAINED = /\bpretrained\s*=\s*True\b/g;
/** torchvision's `weights='IMAGENET1K_V1'`, `weights=ResNet50_Weights.DEFAULT`, `weights="DEFAULT"`. */
const WEIGHTS = /\bweights\s*=\s*(?:(['"])[A-Z][\w]*\1|[A-Z]\w*_Weights(?:\.\w+)?)/g;
/** What a report's failing assertion or evidence checks when it is about structure, not values. */
const STRUCTURE = /\blen\s*\(|\.shape\b|\.size\s*\(|\.ndim\b|\.dim\s*\(|\bisinstance\s*\(|\btype\s*\(|\.keys\s*\(|\bhasattr\s*\(/;

/**
 * Whether the report's symptoms hold with any weights: every expected symptom is a crash, or states a structural
 * check (`assert len(y) == 6`, a shape). Values (wrong outputs, accuracy, NaN) may depend on the weights: never.
 */
export function weightsIrrelevant(expected: readonly Pick<Symptom, 'kind' | 'category' | 'evidence'>[]): boolean {
  return expected.length > 0 && expected.every((x) => x.category === 'crash' || (x.kind === 'wrong_values' && STRUCTURE.test(x.evidence)));
}

/** `pretrained=True` → `pretrained=False`, torchvision `weights=…` → `weights=None`; null when the code loads none. */
export function randomWeights(code: string): string | null {
  const out = code.replace(PRETRAINED, 'pretrained=False').replace(WEIGHTS, 'weights=None');
  return out === code ? null : out;
}

export const RANDOM_WEIGHTS_EDIT =
  'loaded no pretrained weights (`pretrained=True` → `pretrained=False`, `weights=…` → `weights=None`): runs here have no network, ' +
  "and what the report checks (a crash, a shape, a count) does not depend on the weights' values";
