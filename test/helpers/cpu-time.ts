/**
 * CPU milliseconds this process spent in `fn` (user and system, every thread). For a guard against quadratic work
 * in a synchronous scanner: another process's load stretches wall time many times over but this process's CPU
 * time hardly at all, and a synchronous loop cannot be cut short by the test's timeout, so a bound is needed here.
 */
export function cpuMsOf(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}
