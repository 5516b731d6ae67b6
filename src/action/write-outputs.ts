import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import type { ActionOutputName } from './read-action-env.js';

/**
 * Step outputs in the $GITHUB_OUTPUT file format: `name<<DELIMITER`, the value, `DELIMITER`. A random
 * delimiter, checked against the value, so a value can never end its own block and set another output.
 * Pure.
 */
export function formatOutputs(outputs: Partial<Record<ActionOutputName, string>>, delimiter = `repgen_${randomUUID()}`): string {
  return Object.entries(outputs)
    .filter(([, v]) => v !== undefined)
    .map(([name, value]) => {
      if ((value as string).includes(delimiter)) throw new Error(`output ${name} contains its delimiter`);
      return `${name}<<${delimiter}\n${value as string}\n${delimiter}\n`;
    })
    .join('');
}

/** Appends the outputs to $GITHUB_OUTPUT; without one (a local run) they are only logged by the caller. */
export async function writeOutputs(file: string | null, outputs: Partial<Record<ActionOutputName, string>>): Promise<void> {
  if (file) await appendFile(file, formatOutputs(outputs));
}
