/**
 * The statements a notebook traceback shows the reporter ran: IPython marks the failing line of each frame
 * with `---->`, and a frame of the notebook's own cell is headed `<ipython-input-…> in <module>` (IPython 7)
 * or `Cell In[n], line k` (IPython 8). Library frames (`/…/site-packages/x.py in f()`) are not the
 * reporter's code and are skipped. Pure.
 */
const CELL_HEADER =
  /^\s*(?:<ipython-input-[\w-]+>\s+in\s+<module>|Cell\s+In\s*\[\s*\d*\s*\],\s*line\s+\d+|File\s+<ipython-input-[\w-]+>:\d+,\s+in\s+<module>)/;
const OTHER_FRAME = /^\s*(?:\S+\.py\s+in\s+\S+\(|File\s+\S+:\d+,\s+in\s+|<ipython-input-[\w-]+>\s+in\s+(?!<module>))/;
const MARKED = /^\s*-+>\s*\d+\s(.*)$/;

export function notebookStatements(text: string): string[] {
  const out: string[] = [];
  let inCell = false;
  for (const line of text.split('\n')) {
    if (CELL_HEADER.test(line)) {
      inCell = true;
      continue;
    }
    if (OTHER_FRAME.test(line)) {
      inCell = false;
      continue;
    }
    const m = inCell ? MARKED.exec(line) : null;
    const stmt = m?.[1]?.trim();
    if (stmt && stmt.length <= 300 && !out.includes(stmt)) {
      out.push(stmt);
      inCell = false;
    }
  }
  return out;
}
