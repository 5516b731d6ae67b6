/**
 * A regex written over several lines: a formatter cannot break a regex literal, and a 1,000-character alternation
 * cannot be read or reviewed. Each line of the template is trimmed and the lines are joined with nothing between,
 * so the source is the regex itself, with backslashes as in a literal (the template is read raw). A space at the
 * edge of a line would be trimmed: write it `\x20`. No `${}`: a pattern is written, not assembled.
 *
 *   const OOM = regexLines('i')`
 *     out of memory
 *     |CUBLAS_STATUS_ALLOC_FAILED
 *   `;
 */
export function regexLines(flags = ''): (strings: TemplateStringsArray, ...values: never[]) => RegExp {
  return (strings) => {
    const source = strings.raw
      .join('')
      .split('\n')
      .map((line) => line.trim())
      .join('');
    return new RegExp(source, flags);
  };
}
