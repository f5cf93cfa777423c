/**
 * Before each file of the real accelerate tier: the same seal as the unit tier (seal.ts), keeping the venv's
 * Python that scripts/real-tier.mjs hands over. The checks before each pass stay on: the tier runs the real
 * accelerate.
 */
import { sealProcessEnv } from './seal.js';

sealProcessEnv({ keep: ['ZEROWIZ_REAL_PYTHON', 'ZEROWIZ_REAL_VENV'] });
