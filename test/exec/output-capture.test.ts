import { describe, expect, it } from 'vitest';
import { createOutputCapture, omittedMarker } from '../../src/exec/output-capture.js';

describe('createOutputCapture', () => {
  it('keeps everything up to the cap, in order, across chunks', () => {
    const c = createOutputCapture(10);
    for (const part of ['abc', 'defg', 'hij']) c.push(Buffer.from(part));
    expect(c.text()).toBe('abcdefghij');
    expect(c.bytes).toBe(10);
    expect(c.truncated).toBe(false);
  });

  it('past the cap keeps the first and last halves with a marker counting what was dropped', () => {
    const c = createOutputCapture(10);
    c.push(Buffer.from('0123456789'));
    c.push(Buffer.from('abcdefghij'));
    c.push(Buffer.from('KLMNO'));
    expect(c.bytes).toBe(25);
    expect(c.truncated).toBe(true);
    expect(c.text()).toBe(`01234${omittedMarker(15)}KLMNO`);
  });

  it('keeps the tail right when it arrives in many small chunks', () => {
    const c = createOutputCapture(8);
    const all = 'abcdefghijklmnopqrstuvwxyz';
    for (const ch of all) c.push(Buffer.from(ch));
    expect(c.text()).toBe(`abcd${omittedMarker(18)}wxyz`);
  });

  it('never cuts a UTF-8 character in two at either edge', () => {
    const c = createOutputCapture(8);
    // 'é' is 2 bytes, '✓' 3 bytes: the head's 4 bytes end inside the second 'é', the tail's 4 bytes start
    // inside the first '✓'. Both partial characters are dropped rather than decoded as U+FFFD.
    c.push(Buffer.from('aéé' + 'x'.repeat(20) + '✓✓'));
    const text = c.text();
    expect(text).not.toContain('\uFFFD');
    expect(text.startsWith('aé')).toBe(true);
    expect(text.endsWith('✓')).toBe(true);
  });

  it('holds bounded memory whatever the volume', () => {
    const c = createOutputCapture(1000);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 200; i++) c.push(chunk);
    expect(c.bytes).toBe(200 * 64 * 1024);
    expect(Buffer.byteLength(c.text())).toBeLessThan(1000 + 100);
  });
});
