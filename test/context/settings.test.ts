import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import { readContextSettings } from '../../src/context/settings.js';

describe('context settings', () => {
  it('has documented defaults', () => {
    expect(readContextSettings({})).toEqual({
      REPGEN_MODEL_DIR: 'models',
      REPGEN_CONTEXT_CACHE_ENTRIES: 4,
      REPGEN_LEXICAL: 'bm25',
      REPGEN_CONTEXT_MAX_FILE_BYTES: 1_000_000,
      REPGEN_CONTEXT_DEP_DEPTH: 2,
      REPGEN_CONTEXT_WORKERS: availableParallelism(),
      REPGEN_EMBED_BATCH: 32,
      REPGEN_EMBED_MAX_TOKENS: 256,
    });
  });

  it.each([
    [{ REPGEN_LEXICAL: 'elastic' }, /REPGEN_LEXICAL/],
    [{ REPGEN_CONTEXT_DEP_DEPTH: '-1' }, /REPGEN_CONTEXT_DEP_DEPTH/],
    [{ REPGEN_EMBED_BATCH: 'many' }, /REPGEN_EMBED_BATCH/],
    [{ REPGEN_CONTEXT_WORKERS: '0' }, /REPGEN_CONTEXT_WORKERS/],
    [{ REPGEN_CONTEXT_WORKERS: '1000' }, /REPGEN_CONTEXT_WORKERS/],
  ])('names the bad variable in a SetupError: %o', (env, name) => {
    expect(() => readContextSettings(env)).toThrow(SetupError);
    expect(() => readContextSettings(env)).toThrow(name);
  });
});
