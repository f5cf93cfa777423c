/**
 * mkdirPrivate (src/fs/safe-fs.ts) on a shared box: the folders it makes on the way to a path (a user's presets
 * under an XDG folder that others can write in) are the user's, or nothing is made. Another user (nobody, a real
 * second uid) plants a link or a folder of their own where the next folder goes: mkdirPrivate refuses with one
 * line naming it, and makes nothing through it. The hostile torture scenario met the race in CI (a folder made in
 * the victim's folder through a link planted between zerowiz's look and its mkdir).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NEIGHBOUR_SKIP, asNobody, sharedFolder } from '../helpers/neighbour.js';
import { UntrustedPathError, mkdirPrivate } from '../../src/fs/safe-fs.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A shared 1777 folder, and a private victim folder of the user beside it. */
function box(): { shared: string; victim: string } {
  const { root, shared } = sharedFolder('zw-mkdirp-');
  roots.push(root);
  const victim = join(root, 'victim');
  mkdirSync(victim, { mode: 0o700 });
  writeFileSync(join(victim, 'keep.txt'), 'mine\n');
  return { shared, victim };
}

describe.skipIf(NEIGHBOUR_SKIP !== null)('mkdirPrivate beside another user', () => {
  it("makes nothing through another user's link where a folder goes, and names it", () => {
    const b = box();
    // nobody's link at the folder zerowiz is about to use (xdg/zerowiz -> the victim's folder).
    expect(asNobody('ln', ['-s', b.victim, join(b.shared, 'zerowiz')]).status).toBe(0);
    let err: unknown = null;
    try {
      mkdirPrivate(join(b.shared, 'zerowiz', 'presets'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UntrustedPathError);
    expect((err as Error).message).toMatch(
      /scratch\/zerowiz belongs to user nobody .*zerowiz makes no folder through it/,
    );
    expect(readdirSync(b.victim)).toEqual(['keep.txt']);
  });

  it("makes nothing inside another user's folder planted where its folder goes", () => {
    const b = box();
    expect(asNobody('mkdir', ['-m', '0777', join(b.shared, 'zerowiz')]).status).toBe(0);
    expect(() => mkdirPrivate(join(b.shared, 'zerowiz', 'presets'))).toThrow(UntrustedPathError);
    expect(existsSync(join(b.shared, 'zerowiz', 'presets'))).toBe(false);
  });

  it('makes the missing folders, private, when nobody is in the way', () => {
    const b = box();
    mkdirPrivate(join(b.shared, 'zerowiz', 'presets'));
    expect(existsSync(join(b.shared, 'zerowiz', 'presets'))).toBe(true);
  });
});
