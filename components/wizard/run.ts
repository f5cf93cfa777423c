import type { WizardOptions } from '../../src/ui.js';

/** Mounts the wizard (placeholder until the wizard issue lands). */
export async function runWizard(_opts: WizardOptions): Promise<number> {
  process.stderr.write('zerowiz: the wizard is not built yet; see `zerowiz --help`\n');
  return 2;
}
