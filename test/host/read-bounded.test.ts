import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReadBoundedError, readBounded, readBoundedSync } from '../../src/host/read-bounded.js';
import { makeHostileFiles } from '../helpers/hostile-files.js';

let dir = '';
const paths = { fifo: '', sparse: '', link: '', folder: '', small: '', exact: '' };

beforeAll(() => {
  const hostile = makeHostileFiles('repgen-read-bounded-');
  dir = hostile.dir;
  Object.assign(paths, { fifo: hostile.fifo, sparse: hostile.sparse, link: hostile.zeroLink, folder: hostile.folder });
  paths.small = join(dir, 'small.md');
  writeFileSync(paths.small, 'héllo\n');
  paths.exact = join(dir, 'exact.md');
  writeFileSync(paths.exact, 'x'.repeat(1000));
});

const readers = [
  ['readBounded', readBounded],
  ['readBoundedSync', async (path: string, o: Parameters<typeof readBoundedSync>[1]) => readBoundedSync(path, o)],
] as const;

describe.each(readers)('%s', (_name, read) => {
  async function refusal(path: string, maxBytes = 1000): Promise<ReadBoundedError> {
    const err = await read(path, { maxBytes, what: `--issue '${path}'`, limitName: 'REPGEN_MAX_ISSUE_BYTES' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReadBoundedError);
    return err as ReadBoundedError;
  }

  it('reads a regular file whole, up to and at the limit', async () => {
    expect((await read(paths.small, { maxBytes: 1000 })).toString('utf8')).toBe('héllo\n');
    expect((await read(paths.exact, { maxBytes: 1000 })).length).toBe(1000);
  });

  it('/dev/zero: refused as a device, nothing read', async () => {
    const err = await refusal('/dev/zero');
    expect(err.reason).toBe('not_a_file');
    expect(err.message).toBe("--issue '/dev/zero' is a character device, not a regular file");
  });

  it('a FIFO with no writer: refused at once, without blocking', async () => {
    const err = await refusal(paths.fifo);
    expect(err.message).toBe(`--issue '${paths.fifo}' is a named pipe (FIFO), not a regular file`);
  });

  it('a symbolic link to /dev/zero: the target is what counts', async () => {
    expect((await refusal(paths.link)).message).toMatch(/zero\.md' is a character device, not a regular file$/);
  });

  it('a huge sparse file: refused by its size before any read, naming the limit and its setting', async () => {
    const err = await refusal(paths.sparse);
    expect(err.reason).toBe('too_big');
    expect(err.message).toBe(`--issue '${paths.sparse}' is 68719.5 MB; the limit is 1000 bytes (REPGEN_MAX_ISSUE_BYTES)`);
  });

  it('one byte over the limit is too big', async () => {
    expect((await refusal(paths.exact, 999)).reason).toBe('too_big');
  });

  it('a directory, a missing file, a path through a file', async () => {
    expect((await refusal(paths.folder)).message).toMatch(/folder\.md' is a directory, not a regular file$/);
    const missing = await refusal(join(dir, 'nope.md'));
    expect([missing.reason, missing.message]).toEqual(['missing', `--issue '${join(dir, 'nope.md')}' does not exist`]);
    expect((await refusal(join(paths.small, 'x'))).reason).toBe('unreadable');
  });

  it('a /proc file whose size says 0 is read, bounded by what it holds', async () => {
    expect((await read('/proc/self/status', { maxBytes: 100_000 })).toString()).toMatch(/^Name:/);
    expect((await refusal('/proc/self/status', 10)).message).toBe(
      "--issue '/proc/self/status' is longer than 10 bytes; the limit is 10 bytes (REPGEN_MAX_ISSUE_BYTES)",
    );
  });

  it('noFollow (a file a person names): a link to a regular file is refused before and at the open; a regular file is read', async () => {
    const secret = join(dir, `secret-${_name}`);
    writeFileSync(secret, 'root:$6$hash:19000:0:99999:7:::\n', { mode: 0o600 });
    const link = join(dir, `issue-link-${_name}.md`);
    symlinkSync(secret, link);
    expect((await read(link, { maxBytes: 1000 })).toString()).toMatch(/^root:/);
    const err = await read(link, { maxBytes: 1000, what: `--issue '${link}'`, noFollow: true }).then(
      () => null,
      (e: unknown) => e as ReadBoundedError,
    );
    expect([err?.reason, err?.message]).toEqual([
      'not_a_file',
      `--issue '${link}' is a symbolic link (name the file itself), not a regular file`,
    ]);
    expect((await read(paths.small, { maxBytes: 1000, noFollow: true })).toString('utf8')).toBe('héllo\n');
  });
});
