import { describe, expect, it } from 'vitest';
import { canonicalIndexUrl, indexUrlAllowed } from '../../../src/env/decide/match-index-url.js';

const ALLOWED = ['https://pypi.org/simple', 'http://127.0.0.1:8080/simple', 'https://download.pytorch.org/whl'];

describe('indexUrlAllowed (the index allow-list compared as URLs)', () => {
  const cases: Array<[string, boolean, string]> = [
    ['https://pypi.org/simple', true, 'the allowed URL itself'],
    ['https://pypi.org/simple/', true, 'a trailing slash'],
    ['https://pypi.org/simple/sub', true, 'a folder below it'],
    ['https://download.pytorch.org/whl/cpu', true, 'a folder below another'],
    ['HTTPS://PyPI.org/simple', true, 'scheme and host are case-insensitive'],
    ['https://pypi.org:443/simple', true, 'the default port spelled out'],
    ['http://127.0.0.1:8080/simple/x', true, 'a port that is not the default'],
    ['https://pypi.org/simple/../evilidx', false, 'a dot-dot segment'],
    ['https://pypi.org/simple/%2e%2e/evil2idx', false, 'a percent-encoded dot-dot segment'],
    ['https://pypi.org/simple/%2E%2E/evil2idx', false, 'the same, upper case'],
    ['https://pypi.org/simple/.%2e/evil', false, 'half encoded'],
    ['https://pypi.org/simple/%2e./evil', false, 'the other half encoded'],
    ['https://pypi.org/simple/./x', false, 'a dot segment'],
    ['https://pypi.org/simple/..', false, 'a trailing dot-dot'],
    ['https://pypi.org/simple/%2e%2e', false, 'a trailing encoded dot-dot'],
    ['https://pypi.org/simple/..%2Fevil', false, 'an encoded slash'],
    ['https://pypi.org/simple/..%5Cevil', false, 'an encoded backslash'],
    ['https://pypi.org/simple\\..\\evil', false, 'backslashes, which the parser reads as slashes'],
    ['https://pypi.org/simp%6ce', false, 'an encoded unreserved letter (changes under normalisation)'],
    ['https://pypi.org/simple2', false, 'a sibling that shares the prefix'],
    ['https://pypi.org/simpleevil', false, 'a longer name'],
    ['https://pypi.org:8443/simple', false, 'another port'],
    ['http://pypi.org/simple', false, 'another scheme'],
    ['https://pypi.org.evil.com/simple', false, 'a host that starts with the allowed one'],
    ['https://pypi.org@evil.com/simple', false, 'userinfo hiding another host'],
    ['https://pypi.org/simple?x=/../evil', false, 'a query'],
    ['https://pypi.org/simple#x', false, 'a fragment'],
    ['https://pypi.org/sim\tple', false, 'a tab the parser drops'],
    [' https://pypi.org/simple', false, 'leading space the parser trims'],
    ['file:///etc/passwd', false, 'a file URL'],
    ['pypi.org/simple', false, 'no scheme'],
    ['https://pypi.org/simple/%41', false, 'any encoding that changes'],
    ['https://pypi.org/simple/caf\u00e9', false, 'a character the parser encodes'],
  ];
  it.each(cases)('%s → %s (%s)', (url, expected) => {
    expect(indexUrlAllowed(url, ALLOWED)).toBe(expected);
  });

  it('an allow-list entry is compared in its canonical form too, and a malformed one allows nothing', () => {
    expect(indexUrlAllowed('https://pypi.org/simple/x', ['HTTPS://PYPI.ORG:443/simple/'])).toBe(true);
    expect(indexUrlAllowed('https://pypi.org/x', ['https://pypi.org/simple/..'])).toBe(false);
  });
});

describe('canonicalIndexUrl', () => {
  it.each([
    ['HTTPS://PyPI.org:443/simple/', 'https://pypi.org/simple'],
    ['http://[::1]:80/simple', 'http://[::1]/simple'],
    ['https://user:tok@host.example/simple', 'https://user:tok@host.example/simple'],
    ['https://host.example', 'https://host.example'],
  ])('%s → %s', (raw, canonical) => {
    expect(canonicalIndexUrl(raw)).toBe(canonical);
  });
});
