/**
 * The README's sample comment, made from what {@link buildResultComment} renders so it cannot drift from it:
 * the headline, the table, one line naming the folds, and the Environment line, quoted. `npm run readme-sample`
 * writes it from fixtures/outcomes/readme-sample.json; test/publish/readme-sample.test.ts fails when it differs. Pure.
 */
export function readmeSample(comment: string): string {
  const lines = comment.split('\n');
  const headline = lines.find((l) => l.startsWith('### RepGen: ')) ?? '';
  const table = lines.filter((l) => l.startsWith('|'));
  const folds = lines
    .flatMap((l) => {
      if (l.startsWith('**Output** ')) return [l.replace(/^\*\*Output\*\* \(([^)]*)\):?$/, 'Output ($1)')];
      const m = /<summary>(.*?)<\/summary>/.exec(l);
      return m?.[1] ? [m[1].replace(/<code>(.*?)<\/code>/g, '`$1`')] : [];
    })
    .map((f) => `▸ ${f}`);
  const environment = lines.find((l) => l.startsWith('**Environment:** ')) ?? '';
  const block = [headline, '', ...table, ...(folds.length ? ['', folds.join(' · ')] : []), ...(environment ? ['', environment] : [])];
  return block.map((l) => (l ? `> ${l}` : '>')).join('\n');
}

/** The README with its sample (the quoted block after the line ending "for example:") replaced by `sample`. */
export function replaceReadmeSample(readme: string, sample: string): string {
  const lines = readme.split('\n');
  const intro = lines.findIndex((l) => l.trimEnd().endsWith('for example:'));
  if (intro < 0) throw new Error('README has no "for example:" line before its sample comment');
  let start = intro + 1;
  while (lines[start] === '') start += 1;
  let end = start;
  while (end < lines.length && lines[end]?.startsWith('>')) end += 1;
  return [...lines.slice(0, intro + 1), '', ...sample.split('\n'), ...lines.slice(end)].join('\n');
}
