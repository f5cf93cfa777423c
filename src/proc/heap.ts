/**
 * Keeping zerowiz's memory bounded while it works hard: V8 answers a high allocation rate by growing the
 * young generation to its maximum (semi-spaces of 16 MiB, 48 MB with the survivor space), which under a
 * flood of output (the launch) or of frames (the wizard) is most of the process's peak memory for no gain
 * in speed (measured on the 1M-line launch flood: the same CPU time with semi-spaces capped at 4 MiB).
 */
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * The young generation's semi-space cap: 8 MiB (a power of two, so that doubling lands on it). Measured on
 * the wizard: Ink builds every frame cell by cell (about 6 MB of short-lived objects at 100x30), and the
 * uncapped young generation took its peak from about 90 MB to 113 MB in a few dozen key presses; at 8 MiB a
 * frame still dies young; at 4 MiB its live objects are promoted mid-frame (some runs peaked at 111 MB);
 * 1-2 MiB slows keypresses.
 */
export const YOUNG_SEMI_SPACE_CAP_BYTES = 8 * 2 ** 20;

/**
 * Caps the young generation's semi-spaces at `cap` bytes from now on: after each scavenge, growth is
 * turned off (`--semi-space-growth-factor=1`) once the new space has reached the cap, and back on if V8
 * has shrunk it below. `--max-semi-space-size` would do this but is read only when the heap is set
 * up; the growth factor is read at each growth, so it works at run time. Returns the undo.
 */
export function capYoungGeneration(cap = YOUNG_SEMI_SPACE_CAP_BYTES): () => void {
  let growing = true;
  const setGrowth = (grow: boolean) => {
    if (grow === growing) return;
    growing = grow;
    v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
  };
  const check = () => {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    // new_space's size counts both semi-spaces.
    if (space) setGrowth(space.space_size / 2 < cap);
  };
  const observer = new PerformanceObserver((list) => {
    if (
      list
        .getEntries()
        .some((e) => (e as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR)
    )
      check();
  });
  observer.observe({ entryTypes: ['gc'] });
  check();
  return () => {
    observer.disconnect();
    setGrowth(true);
  };
}
