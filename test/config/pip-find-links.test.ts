import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipFindLinks } from '../../src/config/pip-find-links.js';
import { makeTempDir } from '../helpers/temp-dir.js';

describe("the env builder's default wheel folders: pip's own find-links", () => {
  it('takes PIP_FIND_LINKS and the user config, existing absolute folders only, each once', () => {
    const home = makeTempDir('pip-home-');
    const wheels = join(home, 'wheels');
    const more = join(home, 'more');
    mkdirSync(wheels);
    mkdirSync(more);
    mkdirSync(join(home, '.config/pip'), { recursive: true });
    writeFileSync(
      join(home, '.config/pip/pip.conf'),
      `[global]\nfind-links = file://${more} https://example.org/x ${join(home, 'missing')}\n`,
    );
    const got = pipFindLinks({ PIP_FIND_LINKS: `${wheels} ${wheels}` }, home);
    expect(got.slice(0, 2)).toEqual([wheels, more]);
    expect(got).not.toContain(join(home, 'missing'));
    expect(got.every((p) => p.startsWith('/'))).toBe(true);
  });
});
