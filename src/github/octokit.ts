import type { ProbotOctokit } from 'probot';

/** The Octokit every GitHub adapter takes: Probot's, authenticated as one installation. */
export type Octokit = InstanceType<typeof ProbotOctokit>;

/** GitHub's HTTP status of a failed request, when it was one. */
export function httpStatus(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : null;
}

/** An installation's client and its access token. */
export interface InstallationAuth {
  octokit: Octokit;
  /** Installation access token: used for the clone, redacted from everything posted. */
  token: string;
  /**
   * The App's bot account (`SLUG[bot]`), the author of the commits it makes: a candidate commit must be by it
   * (candidate-trailer.ts). Absent when GitHub did not say: any App's bot account then passes that part of the check.
   */
  appLogin?: string;
}
