/** Keeps a CLI process alive while it waits on the pool's unref'd handles. */
export async function keptAlive<T>(wait: Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    return await wait;
  } finally {
    clearInterval(keepAlive);
  }
}

/** `wait`, or undefined once `ms` have passed or `signal` fired. */
export function bounded<T>(wait: Promise<T>, ms: number | null, signal?: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = ms === null ? null : setTimeout(() => resolve(undefined), ms);
    const onAbort = (): void => resolve(undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) resolve(undefined);
    void wait.then((v) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}

/** Those waiting for a thing to be handed over, oldest first; each takes what is offered (true) or declines (false). */
export type Waiters<S> = Set<(offered: S) => boolean>;

/** Hands `offered` to the oldest waiter that takes it, while `free()` says it is still to be had. */
export function offerTo<S>(waiters: Waiters<S>, offered: S, free: () => boolean): void {
  for (const take of waiters) if (!free() || take(offered)) return;
}

/**
 * Whichever comes first: `own` settling, or a thing offered to `waiters` (offerTo) that `accept` takes (it returns
 * what to resolve with, having claimed the thing; null declines). Undefined once `ms` passed or `signal` fired
 * first. Decided once: what comes after, `own` included, is ignored, and nothing is taken after the wait ends.
 */
export async function firstOf<S, R>(
  own: Promise<R>,
  accept: (offered: S) => R | null,
  waiters: Waiters<S>,
  ms: number | null,
  signal: AbortSignal | undefined,
): Promise<R | undefined> {
  let decided = false;
  let result: R | undefined;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const decide = (value: R): void => {
    decided = true;
    result = value;
    settle();
  };
  const take = (offered: S): boolean => {
    if (decided) return false;
    const value = accept(offered);
    if (value === null) return false;
    decide(value);
    return true;
  };
  waiters.add(take);
  void own.then((value) => {
    if (!decided) decide(value);
  });
  try {
    await keptAlive(bounded(settled, ms, signal));
  } finally {
    waiters.delete(take);
    // A timeout or an abort came first: `own`, settling later, is ignored; settling lets bounded drop its listener.
    decided = true;
    settle();
  }
  return result;
}
