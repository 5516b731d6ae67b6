import { describe, expect, it } from 'vitest';
import { parseLauncherReport } from '../../../src/exec/sandbox/launcher.js';

describe('parseLauncherReport', () => {
  it('reads the start line and the final wait4 line', () => {
    const r = parseLauncherReport('{"started": true}\n{"exitCode": 2, "signal": null, "cpuMs": 123.6, "maxRssKb": 20480}\n');
    expect(r).toEqual({ started: true, execError: null, exit: { exitCode: 2, signal: null, cpuMs: 124, peakMemoryMb: 20 } });
  });

  it('a launcher killed before the script ended leaves no exit: usage unknown, not zero', () => {
    expect(parseLauncherReport('{"started": true}\n')).toEqual({ started: true, execError: null, exit: null });
  });

  it('ignores garbage and partial lines', () => {
    expect(parseLauncherReport('not json\n{"started": tr')).toEqual({ started: false, execError: null, exit: null });
  });

  it('carries an exec failure', () => {
    expect(parseLauncherReport('{"started": true}\n{"execError": "/x: [Errno 2] No such file"}\n').execError).toBe(
      '/x: [Errno 2] No such file',
    );
  });
});
