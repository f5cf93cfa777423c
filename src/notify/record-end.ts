/**
 * The end of a run told from its record alone: when its supervisor died (kill -9, the OOM killer) and its
 * watchdog ended the record as interrupted, nothing that watched the run is left, so the last loss, the GPU
 * peak and why come from what run.json kept (each pass's `live` block, the watchdog's note).
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { highestPeak, lastLogLines, peaksFromJson } from '../observe/index.js';
import type { RunRecord } from '../records/index.js';
import { shellWord } from '../text/index.js';
import { type EventFacts, LOG_TAIL_LINES, type NotifyPayload, payloadOf } from './message.js';

/** The last and best loss the record kept (the latest pass that has one). */
function lossOf(rec: RunRecord): EventFacts['loss'] {
  for (const s of [...rec.json.steps].reverse()) {
    const m = s.live?.metrics;
    if (m && m.lastLoss !== null) return { last: m.lastLoss, min: m.minLoss, source: m.lossSource };
  }
  return null;
}

/** The highest peak the record kept over the passes that train with the setup (else any). */
function peakOf(rec: RunRecord): EventFacts['gpu'] {
  const steps = rec.json.steps.filter((s) => s.usesConfig);
  const top = highestPeak(
    (steps.length > 0 ? steps : rec.json.steps).flatMap((s) => (s.live ? peaksFromJson(s.live) : [])),
  );
  if (!top) return null;
  return {
    peakBytes: top.usedBytes,
    gpu: top.index,
    totalBytes: top.totalBytes,
    estimateBytes: rec.json.estimate?.gpuBytesPerGpu ?? null,
  };
}

/** The end event of a record that says how the run ended. */
export function endPayloadOfRecord(rec: RunRecord, report: string | null, now = Date.now()): NotifyPayload {
  const j = rec.json;
  const failed = j.steps.findIndex((s) => s.status === 'failed' || s.status === 'stopped');
  const s = j.steps[failed];
  const ended = j.ended === 'running' ? 'interrupted' : j.ended;
  const wall = j.endedAt ? (Date.parse(j.endedAt) - Date.parse(j.startedAt)) / 1000 : null;
  return payloadOf(
    'end',
    {
      id: j.id,
      name: j.name,
      host: j.supervisor?.host ?? hostname(),
      cwd: j.cwd,
      source: j.source,
      kind: 'local',
      jobId: null,
      startedAt: j.startedAt,
      passes: j.steps.length,
    },
    {
      pass: s
        ? {
            number: failed + 1,
            name: s.name,
            status: s.status,
            exitCode: s.exitCode,
            seconds: s.durationMs === null ? null : s.durationMs / 1000,
          }
        : null,
      outcome: {
        ended,
        exitCode: j.exitCode,
        wallSeconds: wall !== null && Number.isFinite(wall) ? wall : null,
        reason: j.note ?? s?.error ?? null,
      },
      loss: lossOf(rec),
      gpu: peakOf(rec),
      logTail: s && !/[/\\]/.test(s.log) ? lastLogLines(join(rec.dir, s.log), LOG_TAIL_LINES) : [],
      report,
    },
    `cd ${shellWord(j.cwd)} && zerowiz attach ${shellWord(j.id)}`,
    now,
  );
}
