/**
 * The operator's index allow-list (REPGEN_ENV_INDEXES) compared as URLs, not strings: `…/simple/../evilidx` and
 * `…/simple/%2e%2e/evil2idx` start with an allowed prefix, yet uv (which normalises as the WHATWG URL standard does)
 * fetches from the path they resolve to. Pure.
 *
 * A URL is taken only in its canonical form: scheme and host in lower case and the default port left out (those are
 * the same server whatever their spelling), and a path with no dot segment, no percent-encoded unreserved character,
 * separator (`%2F`, `%5C`) or backslash, no query or fragment. A path that any normalisation would change is refused
 * rather than normalised: what the repository wrote is what uv is given, so the two cannot disagree.
 */

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** The canonical form of an index URL (no trailing slash), or null when it is not one or changes under normalisation. */
export function canonicalIndexUrl(raw: string): string | null {
  // The URL parser drops tabs and newlines and reads `\` as `/`: such a URL is not what it says.
  if (/[\s\\]/.test(raw) || raw.includes('?') || raw.includes('#')) return null;
  const written = /^(https?):\/\/[^/?#]*(\/[^?#]*)?$/i.exec(raw);
  if (!written) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // Decoded where the encoding hides nothing (`%41` is `A`): a dot segment spelled `%2e%2e` or `.%2E` shows as one.
  const decoded = (written[2] ?? '').replace(/%([0-9A-Fa-f]{2})/g, (m: string, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : m.toUpperCase();
  });
  if (/%2F|%5C|%00/.test(decoded)) return null;
  const segments = decoded.split('/').slice(1);
  if (segments.some((s) => s === '.' || s === '..')) return null;
  const trim = (p: string): string => p.replace(/\/+$/, '');
  // The parser's own path must be the written one: anything it resolved or encoded differently is refused.
  if (trim(decoded) !== trim(written[2] ?? '') || trim(url.pathname) !== trim(decoded)) return null;
  const userinfo = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  return `${url.protocol}//${userinfo}${url.host}${trim(url.pathname)}`;
}

/** Whether `url` is one of `allowed` or below one of them, both compared in canonical form. */
export function indexUrlAllowed(url: string, allowed: readonly string[]): boolean {
  const candidate = canonicalIndexUrl(url);
  if (candidate === null) return false;
  return allowed.some((entry) => {
    const base = canonicalIndexUrl(entry);
    return base !== null && (candidate === base || candidate.startsWith(`${base}/`));
  });
}
