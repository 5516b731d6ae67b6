import type { LexicalAdapter, LexicalAdapterName } from '../lexical-index.js';

/**
 * Chooses the adapter; each is imported only when chosen. It lives beside the adapters, not in the port
 * (lexical-index.ts), so that the port names no adapter and no file imports in a circle.
 */
export async function lexicalAdapter(name: LexicalAdapterName): Promise<LexicalAdapter> {
  if (name === 'lunr') return (await import('./lunr-index.js')).lunrAdapter;
  if (name === 'bm25') return (await import('./bm25-index.js')).bm25Adapter;
  return (await import('./minisearch-index.js')).miniSearchAdapter;
}
