import { describe, expect, it } from 'vitest';
import { readOperatorEnv } from '../../src/config/operator-env.js';
import { reproSettingsFrom } from '../../src/pipeline/settings.js';

const fromEnv = (env: NodeJS.ProcessEnv) => reproSettingsFrom(readOperatorEnv(env));

describe('reproSettingsFrom', () => {
  it('reads REPGEN_TIER0 (default on; 0/false turn it off; anything else names the variable)', () => {
    expect(fromEnv({}).tier0).toBe(true);
    expect(fromEnv({ REPGEN_TIER0: '0' }).tier0).toBe(false);
    expect(fromEnv({ REPGEN_TIER0: 'false' }).tier0).toBe(false);
    expect(() => fromEnv({ REPGEN_TIER0: 'maybe' })).toThrow(/REPGEN_TIER0/);
  });

  it('lets the overrides win over the environment', () => {
    expect(reproSettingsFrom(readOperatorEnv({ REPGEN_MAX_ATTEMPTS: '9' }), { maxAttempts: 2 }).maxAttempts).toBe(2);
  });
});
