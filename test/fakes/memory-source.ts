import type { IssueSource, ProjectCheckout } from '../../src/pipeline/ports.js';
import type { IssueInput } from '../../src/pipeline/types.js';

/** An IssueSource holding its issue (and checkout) in memory; it counts its calls. */
export function memorySource(
  issue: IssueInput,
  checkout: ProjectCheckout | null = null,
  label = 'memory#1',
): IssueSource & { calls: string[] } {
  const calls: string[] = [];
  return {
    label,
    calls,
    readIssue: async () => {
      calls.push('readIssue');
      return issue;
    },
    checkout: async () => {
      calls.push('checkout');
      return checkout;
    },
  };
}
