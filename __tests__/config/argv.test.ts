/** Pre-flight's view of the steps: paths are resolved against the directory the run starts in, not zerowiz's. */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { earlierOutputs, missingScripts } from '../../src/config/argv.js';
import { DEFAULT_FILES, type Setup } from '../../src/config/setup.js';
import { withDefaults } from '../../src/config/questions.js';

const setup = (steps: Setup['steps']): Setup => ({ name: 't', answers: withDefaults({}), files: DEFAULT_FILES, steps });

describe('pre-flight in another directory than zerowiz runs in', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'zw-pf-'));
  mkdirSync(join(cwd, 'gen'));
  const s = setup([
    { name: 'make', args: ['make.py', '--output_dir', 'gen'], usesConfig: false },
    { name: 'train', args: ['gen/train.py'], usesConfig: true },
  ]);

  it("an earlier step's output is resolved against the run's directory", () => {
    expect(process.cwd()).not.toBe(cwd);
    expect(earlierOutputs(s, 2, cwd)).toEqual([join(cwd, 'gen')]);
  });

  it('a script an earlier step writes is not reported missing', () => {
    expect(missingScripts(s, cwd).map((m) => m.path)).toEqual(['make.py']);
  });
});
