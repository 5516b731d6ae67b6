/**
 * The logger port: pino-shaped (`log.warn({ jobId }, 'static message')`), so Probot's pino logger
 * fits as it is. Core code takes it through `deps.log` and never imports a logger singleton.
 */
export interface Logger {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

const noop = (): void => undefined;

export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** Writes `level msg {json}` lines to a sink (stderr in the CLI); debug lines only when verbose. */
export function createLineLogger(write: (line: string) => void, { verbose = false } = {}): Logger {
  const emit = (level: string) => (obj: Record<string, unknown>, msg: string) => {
    const meta = Object.keys(obj).length ? ` ${JSON.stringify(obj)}` : '';
    write(`${level} ${msg}${meta}\n`);
  };
  return { debug: verbose ? emit('debug') : noop, info: emit('info'), warn: emit('warn'), error: emit('error') };
}
