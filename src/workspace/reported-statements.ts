/**
 * Of the statements a report's traceback shows at module level, those that use the project: an import of
 * one of its packages, or a line naming one (`timm.create_model(...)`). Pure.
 */
export function reportedProjectStatements(lines: readonly string[], packages: readonly string[]): string[] {
  const names = packages.filter((p) => /^[A-Za-z_]\w*$/.test(p));
  if (!names.length) return [];
  const alt = names.join('|');
  const imports = new RegExp(`^\\s*(?:import\\s+(?:${alt})\\b|from\\s+(?:${alt})(?:\\.[\\w.]+)?\\s+import\\b)`);
  const uses = new RegExp(`\\b(?:${alt})\\.`);
  const out: string[] = [];
  for (const l of lines) {
    const line = l.trim();
    if ((imports.test(line) || uses.test(line)) && !out.includes(line)) out.push(line);
  }
  return out;
}
