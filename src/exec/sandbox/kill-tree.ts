import { readdirSync, readFileSync } from 'node:fs';

/** Parent pid of each live process, read from /proc (Linux). Empty where /proc is unreadable. */
function readParents(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may contain spaces and parentheses: fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(name), Number(fields[1]));
    } catch {
      // exited while we looked
    }
  }
  return parents;
}

/** Every descendant of `root` (children, grandchildren, …) alive right now. */
export function listDescendants(root: number): number[] {
  const parents = readParents();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * SIGKILLs `pid`, its process group and every descendant found in /proc. The sandboxes add a pid namespace
 * that the kernel tears down with its init; this walk is what still catches a script that left the process
 * group (setsid) when no sandbox is available. Descendants are listed before anything is killed, because a
 * killed parent's children are re-parented out of reach of the walk.
 */
export function killTree(pid: number): void {
  for (let round = 0; round < 2; round++) {
    const descendants = listDescendants(pid);
    kill(-pid);
    kill(pid);
    for (const d of descendants) kill(d);
  }
}
