/**
 * Puts process.env back to `saved` in place. Assigning `process.env = { ...saved }` would leave a plain object there:
 * the C environment (what os.tmpdir() and child processes' defaults read) no longer follows it, for every later file
 * of the same worker (`isolate: false`).
 */
export function restoreEnv(saved: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  for (const [key, value] of Object.entries(saved)) if (value !== undefined && process.env[key] !== value) process.env[key] = value;
}
