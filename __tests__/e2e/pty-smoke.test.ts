import { describe, expect, it } from 'vitest';
import { spawnPty } from '../helpers/pty.js';

describe('the built bin in a real terminal', () => {
  it('prints its version and exits 0', async () => {
    const s = spawnPty({ args: ['--version'] });
    expect(await s.exited).toBe(0);
    await s.waitFor(/\d+\.\d+\.\d+/);
    expect(s.screen()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
