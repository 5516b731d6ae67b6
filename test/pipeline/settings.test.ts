import { describe, expect, it } from 'vitest';
import { reproSettingsFromEnv } from '../../src/pipeline/settings.js';

describe('reproSettingsFromEnv', () => {
  it('REPGEN_TIER0: on by default, 0/false turns tier 0 off, anything else is refused by name', () => {
    expect(reproSettingsFromEnv({}).tier0).toBe(true);
    expect(reproSettingsFromEnv({ REPGEN_TIER0: '0' }).tier0).toBe(false);
    expect(reproSettingsFromEnv({ REPGEN_TIER0: 'false' }).tier0).toBe(false);
    expect(() => reproSettingsFromEnv({ REPGEN_TIER0: 'maybe' })).toThrow(/REPGEN_TIER0/);
  });
});
