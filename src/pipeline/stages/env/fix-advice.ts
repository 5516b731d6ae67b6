/**
 * Where the person reading an env failure can act (issue 39, item 5): in the App and the Action, a key of the
 * repository's `.github/repgen.yml`; at the terminal, `repgen reproduce`'s flags (`--with`, `--python`) or the
 * checkout's repgen.yml, which the CLI reads at the ref.
 */
export type FixAdviceFor = 'repo-config' | 'cli';

const FLAG: Record<string, string> = {
  'environment.packages': '`--with "PACKAGE==VERSION"`',
  'environment.python': '`--python 3.X`',
};

/** The sentence that names the setting which fixes an env failure, from where the reader runs RepGen. Pure. */
export function fixAdvice(configKey: string, where: FixAdviceFor = 'repo-config'): string {
  if (where === 'repo-config') return ` Setting \`${configKey}\` in .github/repgen.yml can fix it.`;
  const flag = FLAG[configKey];
  return flag
    ? ` Passing ${flag} to repgen reproduce can fix it (or \`${configKey}\` in the checkout's .github/repgen.yml).`
    : ` Setting \`${configKey}\` in the checkout's .github/repgen.yml (repgen reproduce reads it at the ref) can fix it.`;
}
