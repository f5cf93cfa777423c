/** Counting calls to a module's functions, for the tests that prove a thing is computed once (inside vi.mock). */

/**
 * The module `real` with each function named in `names` wrapped to count its calls into `calls[name]` (from 0).
 * In a `vi.mock` factory: `vi.mock(path, async (load) => (await import('../helpers/count.js')).counting(await load(),
 * ['f'], calls))`.
 */
export function counting<M>(real: M, names: readonly string[], calls: Record<string, number>): M {
  const out: Record<string, unknown> = { ...(real as Record<string, unknown>) };
  for (const name of names) {
    const f = out[name] as (...a: unknown[]) => unknown;
    calls[name] = 0;
    out[name] = (...a: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return f(...a);
    };
  }
  return out as M;
}
