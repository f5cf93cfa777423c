import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The seed's golden files: ../shared/seed beside the checkout (CI lays shared/ beside the clone too). */
export const SEED_DIR =
  [join(ROOT, '..', 'shared', 'seed'), join(ROOT, '__tests__', 'fixtures', 'seed')].find((d) => existsSync(d)) ??
  join(ROOT, '..', 'shared', 'seed');
