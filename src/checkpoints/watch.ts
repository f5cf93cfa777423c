/**
 * The checkpoint watcher the run supervisor polls: the output folders of the steps (find.ts) are listed on each
 * poll; a checkpoint that is new since the run started is verified (verify.ts) once it has stopped changing for
 * `settleMs` and, for a DeepSpeed tag, once `latest` names it or a newer tag (DeepSpeed writes `latest` after
 * its own files; other ranks may still write theirs, hence the settling) and, for HF's `checkpoint-N`, once
 * `trainer_state.json` is there (the Trainer writes it last). A bad verdict comes with its alert (title and a fix
 * that runs as printed), which the supervisor hands to its AlertEngine (`engine.checkpoint(step, alert)`). When a
 * step ends, `finish(step)` judges what is still pending at once: nothing more will be written.
 *
 * Cost per poll: one readdir per output folder and a stat per entry (two levels inside a checkpoint folder);
 * a verification reads a safetensors header and at most VALUE_SCAN_MAX_BYTES of values, one checkpoint at a
 * time, synchronously (a LoRA file: milliseconds; see docs/design/benchmarks.md).
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { printable } from '../text/index.js';
import { shellJoin, shellWord } from '../text/index.js';
import type { CheckpointAlertFacts } from '../observe/index.js';
import { readLatest } from './deepspeed.js';
import type { Expectation } from './expect.js';
import { findCheckpoints, verifyFound, type FoundCheckpoint } from './find.js';
import type { CheckpointVerdict, VerdictCause } from './verify.js';

/** A checkpoint unchanged this long is taken as written. */
export const CHECKPOINT_SETTLE_MS = 5_000;
/** How often the supervisor should poll (a save takes seconds to minutes; a poll costs a few stats). */
export const CHECKPOINT_POLL_INTERVAL_MS = 2_000;
/** Checkpoints modified this long before the run started still count as its own (clock granularity). */
const SINCE_SLACK_MS = 2_000;
/** Entries stat'ed per checkpoint folder for its signature, at most. */
const SIGNATURE_MAX_ENTRIES = 4096;

/** One step whose output folders are watched. */
export interface WatchedStep {
  /** The step's index in the run (the alert's `step`). */
  index: number;
  name: string;
  /** Absolute output folders (find.ts outputRoots). */
  roots: string[];
  expect: Expectation;
}

/** What a fix may name: the preset or file the run came from, the setup's name, the run record's id. */
export interface FixContext {
  /** The preset name or file the run came from; null when there is none (a wizard setup never saved). */
  setupRef: string | null;
  /** The name `preset save` gives the corrected setup (default: setupRef when it is a plain name). */
  setupName?: string;
  runId: string | null;
}

/** A verdict reached in a poll, with the alert when it is bad. */
export interface CheckpointEvent {
  step: number;
  verdict: CheckpointVerdict;
  alert: CheckpointAlertFacts | null;
}

/** A verdict as the record keeps it: which step wrote the checkpoint and when it was verified. */
export interface RecordedVerdict extends CheckpointVerdict {
  step: number;
  verifiedAt: number;
}

interface Seen {
  step: number;
  found: FoundCheckpoint;
  sig: string;
  /** When the signature was first seen as it is now. */
  since: number;
  /** The signature the last verdict was reached on, or null. */
  judged: string | null;
}

/** Size, count and newest mtime of a file, or of a folder's files two levels down. */
function signature(path: string): { sig: string; mtimeMs: number } | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isDirectory()) return { sig: `${st.size}:${st.mtimeMs}`, mtimeMs: st.mtimeMs };
  let bytes = 0;
  let count = 0;
  let newest = st.mtimeMs;
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      if (count >= SIGNATURE_MAX_ENTRIES) return;
      try {
        const s = statSync(join(dir, n));
        count++;
        newest = Math.max(newest, s.mtimeMs);
        if (s.isDirectory()) {
          if (depth < 2) walk(join(dir, n), depth + 1);
        } else bytes += s.size;
      } catch {}
    }
  };
  walk(path, 1);
  return { sig: `${count}:${bytes}:${newest}`, mtimeMs: newest };
}

/** Whether the tool that writes this checkpoint has said it is done (see the module comment). */
function finishedWriting(c: FoundCheckpoint, siblings: readonly FoundCheckpoint[]): boolean {
  if (c.kind === 'deepspeed' && c.saveDir) {
    const latest = readLatest(c.saveDir);
    if (latest === c.name) return true;
    // A newer tag of the same folder exists: this one's save is over.
    return siblings.some(
      (s) => s.kind === 'deepspeed' && s.saveDir === c.saveDir && s.step !== null && c.step !== null && s.step > c.step,
    );
  }
  if (c.kind === 'hf-checkpoint') {
    try {
      return statSync(join(c.path, 'trainer_state.json')).isFile();
    } catch {
      return false;
    }
  }
  return true;
}

/** Polls the steps' output folders for new checkpoints and verifies each once it is written. */
export class CheckpointWatcher {
  private readonly seen = new Map<string, Seen>();
  private readonly recorded = new Map<string, RecordedVerdict>();
  private readonly now: () => number;
  private readonly settleMs: number;

  constructor(
    private readonly opts: {
      steps: readonly WatchedStep[];
      /** When the run started (ms since the epoch): older checkpoints are an earlier run's. */
      since: number;
      settleMs?: number;
      now?: () => number;
      /** What the fixes name. */
      fix: FixContext;
      /** Bytes of values read per weights file (verify.ts). */
      scanBytes?: number;
    },
  ) {
    this.now = opts.now ?? Date.now;
    this.settleMs = opts.settleMs ?? CHECKPOINT_SETTLE_MS;
  }

  /** Lists the output folders once; returns the verdicts reached now (new, or changed since). */
  poll(): CheckpointEvent[] {
    return this.scan(null);
  }

  /** Step `index` ended: judges at once every checkpoint of it not judged yet (nothing more will be written). */
  finish(index: number): CheckpointEvent[] {
    return this.scan(index);
  }

  /** Every verdict so far, the latest per checkpoint, in the order first judged. */
  verdicts(): RecordedVerdict[] {
    return [...this.recorded.values()];
  }

  private scan(finishing: number | null): CheckpointEvent[] {
    const now = this.now();
    const out: CheckpointEvent[] = [];
    for (const step of this.opts.steps) {
      for (const root of step.roots) {
        const found = findCheckpoints(root);
        for (const c of found) {
          const s = signature(c.path);
          if (!s || s.mtimeMs < this.opts.since - SINCE_SLACK_MS) continue;
          let seen = this.seen.get(c.path);
          if (!seen || seen.sig !== s.sig) {
            seen = { step: step.index, found: c, sig: s.sig, since: now, judged: seen?.judged ?? null };
            this.seen.set(c.path, seen);
            if (finishing !== step.index) continue;
          }
          if (seen.judged === seen.sig) continue;
          if (finishing !== step.index && (now - seen.since < this.settleMs || !finishedWriting(c, found))) continue;
          seen.judged = seen.sig;
          const verdict = verifyFound(
            c,
            step.expect,
            this.opts.scanBytes !== undefined ? { scanBytes: this.opts.scanBytes } : {},
          );
          const before = this.recorded.get(c.path);
          this.recorded.set(c.path, { ...verdict, step: step.index, verifiedAt: now });
          if (before && before.verdict === verdict.verdict && before.cause === verdict.cause) continue;
          out.push({
            step: step.index,
            verdict,
            alert: verdict.verdict === 'bad' ? checkpointAlert(verdict, this.opts.fix, this.verdicts()) : null,
          });
        }
      }
    }
    return out;
  }
}

const CAUSE_TITLES: Record<VerdictCause, string> = {
  unreadable: 'it cannot be read',
  'not-safetensors': 'it is not a safetensors file',
  truncated: 'the file is cut short',
  'no-tensors': 'it holds no tensors',
  'empty-tensors': 'its tensors are empty (ZeRO-3 saved without the 16-bit gather)',
  'non-finite': 'its weights hold NaN or infinity',
  'lora-mismatch': 'the adapter is not the one configured',
  'too-small': 'it holds only part of the model',
  'index-mismatch': 'its shard index does not match its shards',
  'ds-missing-ranks': 'some ranks did not save their states',
  'ds-truncated': 'a state file is cut short',
  'ds-too-small': 'its optimizer states are partial',
  'ds-unfinished': 'the save did not finish',
  unfinished: 'the save did not finish',
  link: 'it is a symbolic link, not a file the run wrote',
};

/** The name `preset save` can take for the corrected setup (a preset name, not a path). */
function presetName(fix: FixContext & { setupRef: string }): string {
  if (fix.setupName) return fix.setupName;
  return basename(fix.setupRef).replace(/\.ya?ml$/, '');
}

/** The last good DeepSpeed tag of the same save folder before this one, or null. */
function previousGoodTag(v: CheckpointVerdict, others: readonly RecordedVerdict[]): string | null {
  const saveDir = dirname(v.path);
  const good = others.filter(
    (o) => o.kind === 'deepspeed' && o.verdict === 'ok' && dirname(o.path) === saveDir && o.path !== v.path,
  );
  const last = good.at(-1);
  return last ? basename(last.path) : null;
}

/**
 * The alert of a bad checkpoint: a title naming it and the cause, and a fix whose command (in backticks) runs
 * as printed. `others`: the run's verdicts so far (a DeepSpeed fix points `latest` back at the last good tag).
 */
export function checkpointAlert(
  v: CheckpointVerdict,
  fix: FixContext,
  others: readonly RecordedVerdict[] = [],
): CheckpointAlertFacts {
  const cause = v.cause ?? 'unreadable';
  const name = v.kind === 'deepspeed' ? `${basename(dirname(v.path))}/${basename(v.path)}` : basename(v.path);
  const title = `checkpoint ${name} is unusable: ${CAUSE_TITLES[cause]}`;
  const ref = fix.setupRef;
  const gather =
    ref === null
      ? null
      : shellJoin([
          'zerowiz',
          'preset',
          'save',
          presetName({ ...fix, setupRef: ref }),
          '--preset',
          ref,
          '--zero3-save-16bit-model',
          'yes',
        ]);
  const exportCmd =
    fix.runId === null ? null : shellJoin(['zerowiz', 'export', 'weights', fix.runId, '--out', 'weights']);
  const folder = v.kind === 'weights' ? dirname(v.path) : v.path;
  let text: string;
  switch (cause) {
    case 'empty-tensors':
    case 'no-tensors':
    case 'too-small':
      text = `turn the 16-bit gather on so ZeRO-3 saves whole weights: ${gather ? `\`${gather}\`, then launch it again` : 'answer yes to the wizard\'s "Save 16-bit model weights" question (--zero3-save-16bit-model yes), then launch again'}; what this run saved holds no usable weights${exportCmd ? `, except in its DeepSpeed states if it wrote any (\`${exportCmd}\` runs zero_to_fp32 on them)` : ''}`;
      break;
    case 'truncated':
    case 'ds-truncated':
      text = `the save was cut short, most often by a full disk: \`${shellJoin(['df', '-h', folder])}\`; free space and resume from the last good checkpoint (\`zerowiz runs\` lists the verdicts)`;
      break;
    case 'non-finite':
      text =
        'the training diverged before this save: resume from the last good checkpoint with a lower learning rate or gradient clipping (`--gradient-clipping 1.0`), or bf16 instead of fp16 (`--mixed-precision bf16`)';
      break;
    case 'lora-mismatch':
      text = `the saved adapter differs from the configured one: compare the step's --lora_rank and --lora_target_modules with ${ref === null ? "the setup's LoRA rank and targets" : `\`${shellJoin(['zerowiz', 'preset', 'show', ref])}\``}`;
      break;
    case 'ds-missing-ranks':
    case 'ds-unfinished':
    case 'ds-too-small':
    case 'unfinished':
    case 'index-mismatch': {
      const prev = v.kind === 'deepspeed' ? previousGoodTag(v, others) : null;
      text = prev
        ? `point DeepSpeed back at the last whole save so a resume loads it: \`echo ${shellWord(prev)} > ${shellWord(join(dirname(v.path), 'latest'))}\`; then find the rank that failed in the step's log`
        : 'resume from the previous checkpoint (`zerowiz runs` lists the verdicts); the step log says which rank failed or why the save stopped';
      break;
    }
    default:
      text = `look at the file: \`${shellJoin(['ls', '-l', v.path])}\``;
  }
  return { path: v.path, title: printable(title), fix: printable(text) };
}
