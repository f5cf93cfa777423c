/**
 * The sample `zerowiz notify test TARGET` sends: a run's end as a real one would say it, marked as a test
 * (its run id is `zerowiz-notify-test`), so the user sees exactly what a weekend's run will bring.
 */
import { hostname } from 'node:os';
import { type NotifyPayload, payloadOf } from './message.js';

/** The run id of the sample event. */
export const SAMPLE_RUN_ID = 'zerowiz-notify-test';

const GIB = 2 ** 30;

/** The sample payload, at `now`. */
export function samplePayload(cwd: string, now = Date.now()): NotifyPayload {
  const started = now - (2 * 86400 + 3 * 3600) * 1000;
  return payloadOf(
    'end',
    {
      id: SAMPLE_RUN_ID,
      name: 'a test of zerowiz notify',
      host: hostname(),
      cwd,
      source: 'zerowiz notify test',
      kind: 'local',
      jobId: null,
      startedAt: new Date(started).toISOString(),
      passes: 2,
    },
    {
      pass: null,
      outcome: { ended: 'succeeded', exitCode: 0, wallSeconds: (now - started) / 1000, reason: null },
      loss: { last: 0.0412, min: 0.0398, source: 'csv' },
      gpu: { peakBytes: 61.2 * GIB, gpu: 3, totalBytes: 80 * GIB, estimateBytes: 58 * GIB },
      report: null,
    },
    `zerowiz notify test (a test: no run to attach to)`,
    now,
  );
}
