import type { EnvSpec } from '../../src/env/types.js';

/** An EnvSpec with nothing in it but what a test gives: no python pin, no project, PyPI, no notes. */
export function envSpec(over: Partial<EnvSpec> = {}): EnvSpec {
  return {
    python: null,
    pythonWhy: null,
    requirements: [],
    project: null,
    indexUrl: null,
    extraIndexUrls: [],
    findLinks: [],
    excludeNewer: null,
    buildCommands: [],
    notes: [],
    ...over,
  };
}
