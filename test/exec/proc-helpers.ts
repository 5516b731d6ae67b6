import { readdirSync, readFileSync } from 'node:fs';

/** Host pids whose command line contains `marker` (zombies excluded: they are dead, waiting to be reaped). */
export function livePidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(marker)) continue;
      if (isAlive(Number(name))) pids.push(Number(name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Test hygiene: SIGKILLs whatever still carries the marker, so a failing assertion leaves no sleeper behind. */
export function killAllWith(marker: string): void {
  for (const pid of livePidsWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
