import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  buildSeccompFilter,
  DENIED_SYSCALLS,
  hostSeccompArch,
  SYSCALL_NUMBERS,
  type SeccompArch,
} from '../../../src/exec/sandbox/seccomp.js';

/** `__NR_name` numbers of a kernel header (plain numbers only; the generic header's are written that way). */
function headerNumbers(path: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of readFileSync(path, 'utf8').matchAll(/^#define __NR_([a-z0-9_]+)\s+(\d+)\s*$/gm)) out.set(m[1] as string, Number(m[2]));
  return out;
}

const HEADERS: Record<SeccompArch, string> = {
  x86_64: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h',
  aarch64: '/usr/include/asm-generic/unistd.h',
};

describe('seccomp filter', () => {
  it.each(Object.keys(HEADERS) as SeccompArch[])('%s: every syscall number matches the kernel headers (where installed)', (arch) => {
    const path = HEADERS[arch];
    if (!existsSync(path)) return;
    const fromHeader = headerNumbers(path);
    for (const [name, nr] of Object.entries(SYSCALL_NUMBERS[arch])) expect([name, fromHeader.get(name)]).toEqual([name, nr]);
  });

  it('names every syscall the issue lists, on both architectures where it exists', () => {
    for (const name of ['pidfd_getfd', 'ptrace', 'mount', 'bpf', 'keyctl', 'perf_event_open', 'userfaultfd', 'setns'] as const) {
      expect(DENIED_SYSCALLS).toContain(name);
      expect(SYSCALL_NUMBERS.x86_64[name]).toBeDefined();
      expect(SYSCALL_NUMBERS.aarch64[name]).toBeDefined();
    }
  });

  it('is a well-formed BPF program: 8-byte instructions, ends in returns, jumps in range', () => {
    for (const arch of ['x86_64', 'aarch64'] as const) {
      const prog = buildSeccompFilter(arch);
      expect(prog.length % 8).toBe(0);
      const n = prog.length / 8;
      expect(n).toBeLessThan(4096);
      for (let i = 0; i < n; i++) {
        const code = prog.readUInt16LE(i * 8);
        const jt = prog.readUInt8(i * 8 + 2);
        const jf = prog.readUInt8(i * 8 + 3);
        if ((code & 0x07) === 0x05) expect(i + 1 + Math.max(jt, jf)).toBeLessThan(n);
        if (i === n - 1) expect(code).toBe(0x06);
      }
    }
  });

  it('this host has a table (the CI runners are x86_64 or arm64)', () => {
    expect(hostSeccompArch()).not.toBeNull();
  });
});
