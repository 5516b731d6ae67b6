import { describe, expect, it } from 'vitest';
import { cpuWheelOverCap } from '../../../src/env/decide/cpu-wheel-over-cap.js';

describe('the CPU wheel above a project’s cap', () => {
  it('is the nearest wheel above the upper bound that meets the lower ones', () => {
    expect(cpuWheelOverCap('>=2.1.0,<2.10.0', ['2.13.0+cpu', '2.11.0+cpu'])).toBe('2.11.0+cpu');
    expect(cpuWheelOverCap('>=2.1.0, <=2.9', ['2.13.0+cpu'])).toBe('2.13.0+cpu');
    expect(cpuWheelOverCap('<2.10', ['2.13.0+cpu'])).toBe('2.13.0+cpu');
  });

  it('is none without an upper bound, for a pinned version, or when no wheel meets the lower bounds', () => {
    expect(cpuWheelOverCap('>=2.1', ['2.13.0+cpu'])).toBeNull();
    expect(cpuWheelOverCap('', ['2.13.0+cpu'])).toBeNull();
    expect(cpuWheelOverCap('==2.9.1', ['2.13.0+cpu'])).toBeNull();
    expect(cpuWheelOverCap('~=2.9.0', ['2.13.0+cpu'])).toBeNull();
    expect(cpuWheelOverCap('>=2.14,<2.16', ['2.13.0+cpu'])).toBeNull();
    expect(cpuWheelOverCap('>=2.1,<2.10', [])).toBeNull();
  });
});
