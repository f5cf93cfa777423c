// Start-up of the plain commands, as ratios to `node -e 0` measured in the same run.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function bench({ bin, nodeBaselineMs, timeNode }) {
  const rows = [];
  const version = timeNode([bin, '--version']);
  rows.push({ name: 'zerowiz --version (vs node -e 0)', value: version, unit: 'ms', ratio: version / nodeBaselineMs });
  const print = timeNode([bin, 'generate', '--preset', 'qwen-image-lora-lowvram', '--print', 'json']);
  rows.push({
    name: 'zerowiz generate --preset ... --print json (vs node -e 0)',
    value: print,
    unit: 'ms',
    ratio: print / nodeBaselineMs,
  });
  const out = mkdtempSync(join(tmpdir(), 'zw-bench-'));
  const write = timeNode([bin, 'generate', '--mode', '3-offload', '--num-processes', '8', '--out', out]);
  rows.push({
    name: 'zerowiz generate --out DIR, both files (vs node -e 0)',
    value: write,
    unit: 'ms',
    ratio: write / nodeBaselineMs,
  });
  return rows;
}
