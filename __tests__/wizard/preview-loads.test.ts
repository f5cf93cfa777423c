/**
 * The preview is pure: what it loads, bundled as the bin bundles it, holds no write transaction (src/fs/write.ts:
 * locks, journals, backups), so the wizard's first screens pay for none of it.
 */
import { describe, expect, it } from 'vitest';
import { bundledInputs } from '../helpers/bundle.js';

describe('the preview', () => {
  it('does not load the write transaction', async () => {
    const inputs = await bundledInputs('src/wizard/preview.ts');
    expect(inputs).toContain('src/wizard/preview.ts');
    expect(inputs).toContain('src/config/files.ts');
    expect(inputs.filter((f) => f === 'src/fs/write.ts' || f === 'src/config/write-files.ts')).toEqual([]);
  });
});
