import type { Redis } from 'ioredis';

/**
 * Per-repository rate limit as start-time reservations in a sorted set: a run that would be the
 * (limit+1)-th within the window is given the earliest slot that keeps every window at `limit`, and the
 * job is queued with that delay. Nothing is refused, so nothing a maintainer asked for is lost.
 */
const RESERVE = `
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local n = redis.call('ZCARD', key)
local slot = now
if n >= limit then
  local t = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
  slot = math.max(now, tonumber(t[2]) + window)
end
redis.call('ZADD', key, slot, ARGV[4])
redis.call('PEXPIRE', key, (slot - now) + window)
return slot - now`;

export interface RepoRateLimit {
  /** Runs per window. */
  limit: number;
  windowMs: number;
}

/** Reserves a start slot for `member` (a job id); resolves to how long the job must wait (0 = now). */
export async function reserveRepoSlot(
  redis: Redis,
  prefix: string,
  repoFullName: string,
  member: string,
  { limit, windowMs }: RepoRateLimit,
  now = Date.now(),
): Promise<number> {
  const key = `${prefix}:rate:${repoFullName.toLowerCase()}`;
  return Number(await redis.eval(RESERVE, 1, key, now, windowMs, limit, member));
}
