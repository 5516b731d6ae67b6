import { describe, expect, it } from 'vitest';
import { pypiReleaseDates } from '../../../src/env/decide/pypi-release-dates.js';

/** A fetch that answers from a table and records the URLs it was asked for. */
function fakeFetch(table: Record<string, unknown>) {
  const urls: string[] = [];
  const f = (input: string | URL | Request) => {
    const url = String(input);
    urls.push(url);
    const body = table[url];
    return Promise.resolve(
      new Response(body === undefined ? 'not found' : JSON.stringify(body), { status: body === undefined ? 404 : 200 }),
    );
  };
  return { fetch: f as typeof fetch, urls };
}

describe('pypiReleaseDates (PyPI JSON adapter)', () => {
  it('reads each release’s first upload, its wheels and whether every file was yanked; asks once per name', async () => {
    const { fetch, urls } = fakeFetch({
      'https://pypi.example/pypi/numpy/json': {
        info: { name: 'numpy' },
        releases: {
          '1.17.0': [
            { filename: 'numpy-1.17.0.zip', upload_time_iso_8601: '2019-07-26T20:10:00.000000Z', yanked: false },
            {
              filename: 'numpy-1.17.0-cp37-cp37m-manylinux1_x86_64.whl',
              upload_time_iso_8601: '2019-07-26T20:00:00.000000Z',
              yanked: false,
            },
          ],
          '1.23.0': [{ filename: 'numpy-1.23.0-cp311-cp311-manylinux_2_17_x86_64.whl', upload_time: '2022-06-22T22:00:00', yanked: true }],
          '0.9.6': [],
        },
      },
    });
    const dates = pypiReleaseDates({ base: 'https://pypi.example/', fetch });
    expect(await dates.releases('numpy')).toEqual([
      {
        version: '1.17.0',
        uploaded: '2019-07-26T20:00:00.000000Z',
        wheels: ['numpy-1.17.0-cp37-cp37m-manylinux1_x86_64.whl'],
        yanked: false,
      },
      { version: '1.23.0', uploaded: '2022-06-22T22:00:00Z', wheels: ['numpy-1.23.0-cp311-cp311-manylinux_2_17_x86_64.whl'], yanked: true },
    ]);
    await dates.releases('numpy');
    expect(urls).toEqual(['https://pypi.example/pypi/numpy/json']);
    expect(await dates.releases('no-such-package')).toBeNull();
  });
});
