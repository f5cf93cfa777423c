/**
 * One keyboard subscription for the whole app, so no key is lost or sent to the wrong screen.
 *
 * Ink hands each key to the `useInput` hooks subscribed at that moment, and a hook subscribes in a
 * passive effect, after the frame is drawn: a key typed right after a new list appears went to nobody,
 * and a list's handler could still see the state of the frame before. Here the router subscribes once,
 * handlers register in layout effects (at commit) and always run their latest closure. Keys that arrive
 * together (one chunk, a paste, tmux's send-keys) are handled one per React commit, each after the commit
 * that the previous one led to; text that arrives as one Ink event ("2\r", "\r\r", "2c10d") is split into
 * one key per character first.
 */
import type React from 'react';
import { createContext, useContext, useLayoutEffect, useRef, useState } from 'react';
import { useInput } from 'ink';
import { KEY_TABLES, dispatchKey, type Command, type Surface, type SurfaceHandler } from '../../src/wizard/index.js';
import { NO_KEY, firstBinding, type KeyPress } from '../../src/text/index.js';

/** A key handler: the typed text (empty for special keys) and the key flags (Ink's `Key` is one). */
export type KeyHandler = (input: string, key: KeyPress) => void;

interface Router {
  add(handler: { current: KeyHandler }): () => void;
  /** Hands every key over whole (a paste as one text, not split) to this handler until the returned release. */
  raw(handler: { current: KeyHandler }): () => void;
  /** Holds the keys back (they wait in line) until the returned release is called. */
  hold(): () => void;
}

const RouterContext = createContext<Router | null>(null);

/** Keys handed over in one chain of nested commits at most (React allows 50 nested updates). */
export const NESTED_KEYS_MAX = 20;

/** The key one control character stands for. */
function controlKey(ch: string): [string, KeyPress] {
  if (ch === '\r' || ch === '\n') return ['', { ...NO_KEY, return: true }];
  if (ch === '\x7f' || ch === '\b') return ['', { ...NO_KEY, backspace: true }];
  if (ch === '\t') return ['', { ...NO_KEY, tab: true }];
  if (ch === '\x1b') return ['', { ...NO_KEY, escape: true, meta: true }];
  // Ctrl+A .. Ctrl+Z (Ctrl+C, Ctrl+G, ...) as Ink reads one on its own: the letter, with ctrl.
  const code = ch.charCodeAt(0);
  if (code >= 1 && code <= 26) return [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }];
  return ['', NO_KEY];
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * The keys one Ink input event holds. Ink splits escape sequences off, but hands a run of typed text with
 * control characters in it ("29501\r2c10d\r", a paste, tmux's send-keys) over as ONE event. A person types
 * one key at a time, and each may change the screen: "2" chooses the second entry of a list and the "c10d"
 * after it belongs to the text field that choice opens. So every character is its own key, in order.
 */
export function splitKeys(input: string, key: KeyPress): [string, KeyPress][] {
  if (input.length < 2 || key.ctrl || key.meta) return [[input, key]];
  const chars = [...input];
  if (chars.length < 2) return [[input, key]];
  return chars.map((ch) => (CONTROL.test(ch) ? controlKey(ch) : [ch, NO_KEY]));
}

/**
 * Routes every key to the registered handlers, in order, one key per React commit: a key that arrives behind
 * others is handed over in the router's layout effect, after the commit that the previous key led to, so it
 * reaches the screen (and the handlers) that key opened. The handlers of a new screen register in their own
 * layout effects, which React runs before their parent's, in the same commit.
 */
export function KeyRouter({
  isActive = true,
  children,
}: {
  isActive?: boolean;
  children: React.ReactNode;
}): React.JSX.Element {
  const handlers = useRef(new Set<{ current: KeyHandler }>());
  const queue = useRef<[string, KeyPress][]>([]);
  const [turn, setTurn] = useState(0);
  const holds = useRef(0);
  const rawHandler = useRef<{ current: KeyHandler } | null>(null);
  const router = useRef<Router>({
    add(h) {
      handlers.current.add(h);
      return () => {
        handlers.current.delete(h);
      };
    },
    raw(h) {
      rawHandler.current = h;
      return () => {
        if (rawHandler.current === h) rawHandler.current = null;
      };
    },
    hold() {
      holds.current++;
      return () => {
        holds.current--;
        if (holds.current === 0 && queue.current.length > 0) setTurn((t) => t + 1);
      };
    },
  });
  // A key is handed over at once when nothing waits; a key behind it waits for the commit that the one before
  // led to (not a timer or a microtask: when React renders an update is its business, and the bundled
  // production build and the test build differ), so each reaches the screen the one before it opened.
  const waiting = useRef(false);
  const deliver = () => {
    if (holds.current > 0 || waiting.current) return;
    const k = queue.current.shift();
    if (!k) return;
    waiting.current = true;
    for (const h of [...handlers.current]) h.current(k[0], k[1]);
    // Committed with (or after) whatever this key changed; the router's layout effect then hands over the next.
    setTurn((t) => t + 1);
  };
  // Each key handed over from the layout effect makes the next commit a nested update; React stops a chain
  // of more than 50 (error #185: "Maximum update depth exceeded"), which a long paste is. So after a run of
  // keys the next one is handed over in a task of its own: still after the commit the previous key led to.
  const chain = useRef(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per turn: one key per commit.
  useLayoutEffect(() => {
    waiting.current = false;
    if (queue.current.length === 0) {
      chain.current = 0;
      return;
    }
    if (++chain.current < NESTED_KEYS_MAX) {
      deliver();
      return;
    }
    chain.current = 0;
    waiting.current = true;
    setImmediate(() => {
      waiting.current = false;
      deliver();
    });
  }, [turn]);
  useInput(
    (input, key) => {
      // A text box that takes pastes whole gets each Ink event as it came, once the keys before it are handed over.
      if (rawHandler.current && queue.current.length === 0 && !waiting.current) {
        rawHandler.current.current(input, key);
        return;
      }
      queue.current.push(...splitKeys(input, key));
      deliver();
    },
    { isActive },
  );
  return <RouterContext.Provider value={router.current}>{children}</RouterContext.Provider>;
}

/**
 * Like Ink's `useInput`, through the router when there is one: registered at commit, and always the
 * latest `handler`. Without a router (a screen rendered on its own in a test) it falls back to Ink's.
 */
export function useKeys(handler: KeyHandler, { isActive = true }: { isActive?: boolean } = {}): void {
  const router = useContext(RouterContext);
  const ref = useRef(handler);
  useLayoutEffect(() => {
    ref.current = handler;
  });
  useLayoutEffect(() => {
    if (!router || !isActive) return;
    return router.add(ref);
  }, [router, isActive]);
  useInput((input, key) => ref.current(input, key), { isActive: isActive && router === null });
}

/**
 * While active, every key goes to `handler` whole, before any screen's keys: a paste arrives as one text (with
 * its newlines), not as one key per character. Without a router it falls back to Ink's `useInput`.
 */
export function useRawKeys(handler: KeyHandler, { isActive = true }: { isActive?: boolean } = {}): void {
  const router = useContext(RouterContext);
  const ref = useRef(handler);
  useLayoutEffect(() => {
    ref.current = handler;
  });
  useLayoutEffect(() => {
    if (!router || !isActive) return;
    return router.raw(ref);
  }, [router, isActive]);
  useInput((input, key) => ref.current(input, key), { isActive: isActive && router === null });
}

/**
 * While `hold` is true (a screen is busy, e.g. writing files), keys wait in line instead of reaching
 * handlers that are about to be replaced; they are handed over, in order, once it is false again.
 */
export function useKeyHold(hold: boolean): void {
  const router = useContext(RouterContext);
  useLayoutEffect(() => (router && hold ? router.hold() : undefined), [router, hold]);
}

/** Where the focused views' key handlers live: one per surface (see src/wizard/keytable.ts). */
type SurfaceRegistry = Map<Surface, { current: SurfaceHandler }>;

const SurfaceContext = createContext<SurfaceRegistry | null>(null);

/**
 * The wizard's key dispatcher: one subscription that hands each key to the surfaces of `stack`, innermost
 * first, until a handler says "handled" (dispatchKey). Views inside register their surface's handler with
 * useSurface; `own` holds the handlers of the surfaces the dispatcher's owner handles itself.
 */
export function KeyDispatcher({
  stack,
  own,
  isActive = true,
  children,
}: {
  stack: readonly Surface[];
  own: Partial<Record<Surface | 'always', SurfaceHandler>>;
  isActive?: boolean;
  children: React.ReactNode;
}): React.JSX.Element {
  const registry = useRef<SurfaceRegistry>(new Map());
  useKeys(
    (input, key) => {
      const views: Partial<Record<Surface, SurfaceHandler>> = {};
      for (const [surface, ref] of registry.current) views[surface] = ref.current;
      dispatchKey(stack, input, key, { ...views, ...own });
    },
    { isActive },
  );
  return <SurfaceContext.Provider value={registry.current}>{children}</SurfaceContext.Provider>;
}

/**
 * Registers the handler of a focused view's surface (a list, a text field) with the dispatcher around it,
 * at commit, always its latest closure; it returns "handled" for the keys it acted on. Without a dispatcher
 * (a view rendered alone in a test) the surface's own key table decides which keys reach it.
 */
export function useSurface(
  surface: Surface,
  handler: (command: Command, input: string, key: KeyPress) => 'handled' | 'unhandled',
  { isActive = true }: { isActive?: boolean } = {},
): void {
  const registry = useContext(SurfaceContext);
  const ref = useRef<SurfaceHandler>(handler);
  useLayoutEffect(() => {
    ref.current = handler;
  });
  useLayoutEffect(() => {
    if (!registry || !isActive) return;
    const entry = { current: (c: Command, i: string, k: KeyPress) => ref.current(c, i, k) };
    registry.set(surface, entry);
    return () => {
      if (registry.get(surface) === entry) registry.delete(surface);
    };
  }, [registry, isActive, surface]);
  useKeys(
    (input, key) => {
      const binding = firstBinding(KEY_TABLES, [surface], input, key)?.binding;
      if (binding && binding.command !== 'swallow') ref.current(binding.command, input, key);
    },
    { isActive: isActive && registry === null },
  );
}
