/**
 * The one memo zerowiz keys on content: the last N values computed, most recently used kept. A value worked out
 * from a setup (its compiled files, its preview, its estimate) is computed once however many readers ask.
 */

/** A memo of the last `size` values by key. */
export interface Memo<V> {
  /** The value kept for `key`, else `make()`'s, kept (a throw is not kept). */
  get(key: string, make: () => V): V;
}

/** A memo that keeps the last `size` values used. */
export function memoLast<V>(size: number): Memo<V> {
  const kept = new Map<string, V>();
  return {
    get(key, make) {
      if (kept.has(key)) {
        const hit = kept.get(key) as V;
        kept.delete(key);
        kept.set(key, hit);
        return hit;
      }
      const v = make();
      kept.set(key, v);
      if (kept.size > size) kept.delete(kept.keys().next().value as string);
      return v;
    },
  };
}
