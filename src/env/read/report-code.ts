// The code of a report: its fenced blocks (prose never counts as code). A fence left open runs to the end of the
// text, as GitHub renders it: a post cut short inside its script (or one whose author forgot the closing fence) still
// has code, and its setup lines (`os.environ["KERAS_BACKEND"] = "torch"`) still count. Pure.

/** The fenced code blocks of a report, joined by newlines; an unclosed last fence runs to the end. */
export function reportCode(report: string): string {
  return [...report.matchAll(/^[ \t]*```[^\n]*\n([\s\S]*?)(?:^[ \t]*```|(?![\s\S]))/gm)].map((m) => m[1] ?? '').join('\n');
}
