// Start-up of the plain commands, as ratios to `node -e 0` measured in the same run.
export async function bench({ bin, nodeBaselineMs, timeNode }) {
  const rows = [];
  const version = timeNode([bin, '--version']);
  rows.push({ name: 'zerowiz --version (vs node -e 0)', value: version, unit: 'ms', ratio: version / nodeBaselineMs });
  return rows;
}
