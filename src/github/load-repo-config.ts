import { parse as parseYaml } from 'yaml';
import { parseRepoConfig, type RepoConfigResult } from '../config/repo-config.js';
import type { Octokit } from './octokit.js';

export const REPO_CONFIG_PATH = '.github/repgen.yml';

/**
 * Reads `.github/repgen.yml` from the default branch. Absent → defaults; present but bad → the problems
 * (the caller comments them and runs nothing). `rawLabel` is the file's `label` when it can be read at all,
 * so a bad file still lets the label handler know whether the label it saw was meant for RepGen.
 */
export async function loadRepoConfig(
  octokit: Octokit,
  owner: string,
  repo: string,
): Promise<RepoConfigResult & { rawLabel: string | null }> {
  let text: string | null = null;
  try {
    const { data } = await octokit.rest.repos.getContent({ owner, repo, path: REPO_CONFIG_PATH });
    if (Array.isArray(data) || data.type !== 'file' || typeof (data as { content?: unknown }).content !== 'string') {
      return { ok: false, problems: [{ key: '(file)', message: `${REPO_CONFIG_PATH} is not a file` }], rawLabel: null };
    }
    text = Buffer.from((data as { content: string }).content, 'base64').toString('utf8');
  } catch (err) {
    if ((err as { status?: number }).status !== 404) throw err;
  }
  return { ...parseRepoConfig(text), rawLabel: text === null ? null : readRawLabel(text) };
}

function readRawLabel(text: string): string | null {
  try {
    const data = parseYaml(text, { maxAliasCount: 50 }) as unknown;
    const label = (data as { label?: unknown } | null)?.label;
    return typeof label === 'string' ? label : null;
  } catch {
    return null;
  }
}
