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
import { useInput, type Key } from 'ink';

/** A key handler: the typed text (empty for special keys) and Ink's key flags. */
export type KeyHandler = (input: string, key: Key) => void;

interface Router {
  add(handler: { current: KeyHandler }): () => void;
  /** Holds the keys back (they wait in line) until the returned release is called. */
  hold(): () => void;
}

const RouterContext = createContext<Router | null>(null);

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
} as Key;

/** The key one control character stands for. */
function controlKey(ch: string): [string, Key] {
  if (ch === '\r' || ch === '\n') return ['', { ...NO_KEY, return: true }];
  if (ch === '\x7f' || ch === '\b') return ['', { ...NO_KEY, backspace: true }];
  if (ch === '\t') return ['', { ...NO_KEY, tab: true }];
  if (ch === '\x1b') return ['', { ...NO_KEY, escape: true, meta: true }];
  if (ch === '\x03') return ['c', { ...NO_KEY, ctrl: true }];
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
export function splitKeys(input: string, key: Key): [string, Key][] {
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
  const queue = useRef<[string, Key][]>([]);
  const [turn, setTurn] = useState(0);
  const holds = useRef(0);
  const router = useRef<Router>({
    add(h) {
      handlers.current.add(h);
      return () => {
        handlers.current.delete(h);
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
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per turn: one key per commit.
  useLayoutEffect(() => {
    waiting.current = false;
    deliver();
  }, [turn]);
  useInput(
    (input, key) => {
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
 * While `hold` is true (a screen is busy, e.g. writing files), keys wait in line instead of reaching
 * handlers that are about to be replaced; they are handed over, in order, once it is false again.
 */
export function useKeyHold(hold: boolean): void {
  const router = useContext(RouterContext);
  useLayoutEffect(() => (router && hold ? router.hold() : undefined), [router, hold]);
}
