/**
 * One keyboard subscription for the whole app, so no key is lost or sent to the wrong screen.
 *
 * Ink hands each key to the `useInput` hooks subscribed at that moment, and a hook subscribes in a
 * passive effect, after the frame is drawn: a key typed right after a new list appears went to nobody,
 * and a list's handler could still see the state of the frame before. Here the router subscribes once,
 * handlers register in layout effects (at commit, before the next key can be read) and always run
 * their latest closure. Keys that arrive together (one chunk, a paste) are handled one per turn of the
 * event loop, each after the previous one has been rendered; pasted text that mixes characters and
 * control keys ("2\r", "\r\r") arrives as one Ink event and is split first.
 */
import type React from 'react';
import { createContext, useContext, useLayoutEffect, useRef } from 'react';
import { useInput, type Key } from 'ink';

/** A key handler: the typed text (empty for special keys) and Ink's key flags. */
export type KeyHandler = (input: string, key: Key) => void;

interface Router {
  add(handler: { current: KeyHandler }): () => void;
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
 * The keys one Ink input event holds: itself, or, for pasted text with control characters in it,
 * each run of printable text and each control character in order.
 */
export function splitKeys(input: string, key: Key): [string, Key][] {
  if (input.length < 2 || key.ctrl || key.meta || !CONTROL.test(input)) return [[input, key]];
  const out: [string, Key][] = [];
  let run = '';
  for (const ch of input) {
    if (CONTROL.test(ch)) {
      if (run !== '') out.push([run, NO_KEY]);
      run = '';
      out.push(controlKey(ch));
    } else run += ch;
  }
  if (run !== '') out.push([run, NO_KEY]);
  return out;
}

/** Routes every key to the registered handlers, in order, one key per turn of the event loop. */
export function KeyRouter({
  isActive = true,
  children,
}: {
  isActive?: boolean;
  children: React.ReactNode;
}): React.JSX.Element {
  const handlers = useRef(new Set<{ current: KeyHandler }>());
  const queue = useRef<[string, Key][]>([]);
  const timer = useRef<NodeJS.Immediate | null>(null);
  const router = useRef<Router>({
    add(h) {
      handlers.current.add(h);
      return () => {
        handlers.current.delete(h);
      };
    },
  });
  // React renders an update in a microtask after the handler that made it, so a key handled in a
  // later turn of the event loop sees the screen (and the handlers) the previous key led to. Keys that
  // arrive in the same turn (one chunk, a paste) wait in line for the next turn.
  const deliverNext = () => {
    const k = queue.current.shift();
    if (!k) return;
    for (const h of [...handlers.current]) h.current(k[0], k[1]);
    timer.current = setImmediate(() => {
      timer.current = null;
      deliverNext();
    });
  };
  useInput(
    (input, key) => {
      queue.current.push(...splitKeys(input, key));
      if (timer.current === null) deliverNext();
    },
    { isActive },
  );
  useLayoutEffect(
    () => () => {
      if (timer.current !== null) clearImmediate(timer.current);
      timer.current = null;
    },
    [],
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
