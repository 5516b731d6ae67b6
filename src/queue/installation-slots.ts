import type { Redis } from 'ioredis';

/**
 * Per-installation concurrency cap across every worker: a semaphore of leases in a sorted set
 * (member = job id, score = lease expiry). Leases expire, so a killed worker's slot frees itself;
 * a running job renews its lease while it works.
 */
const ACQUIRE = `
local key, now, lease, cap, id = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if redis.call('ZSCORE', key, id) or redis.call('ZCARD', key) < cap then
  redis.call('ZADD', key, now + lease, id)
  redis.call('PEXPIRE', key, lease)
  return 1
end
return 0`;

export interface SlotOptions {
  /** Active runs per installation. */
  cap: number;
  /** Lease length in ms; renewed every third of it while the job runs. */
  leaseMs: number;
}

export class InstallationSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: SlotOptions,
  ) {}

  /** Takes (or renews) a slot; false when the installation already runs `cap` jobs. */
  async acquire(installationId: number, jobId: string, now = Date.now()): Promise<boolean> {
    const res = await this.redis.eval(ACQUIRE, 1, this.key(installationId), now, this.options.leaseMs, this.options.cap, jobId);
    return Number(res) === 1;
  }

  async release(installationId: number, jobId: string): Promise<void> {
    await this.redis.zrem(this.key(installationId), jobId);
  }

  /** Keeps the lease alive until the returned function is called. */
  keepAlive(installationId: number, jobId: string): () => void {
    const timer = setInterval(
      () => void this.acquire(installationId, jobId).catch(() => undefined),
      Math.max(200, this.options.leaseMs / 3),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  private key(installationId: number): string {
    return `${this.prefix}:slots:${installationId}`;
  }
}
