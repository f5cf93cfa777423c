/**
 * `zerowiz export weights RUN [--step N] [--layout comfyui|diffusers|diffsynth] [--python PATH] --out DIR`: the
 * weights of a run's last good checkpoint (or of step N), in a form other tools load:
 *
 * - a DiffSynth-Studio LoRA (`epoch-N.safetensors`) rewritten in the key layout chosen (default ComfyUI's; see
 *   src/checkpoints/lora-layout.ts), the tensors' bytes as saved;
 * - any other weights file, and the weights files of a `checkpoint-N` (with its index), as saved;
 * - a checkpoint that holds only ZeRO shards (ZeRO-3 without the 16-bit gather, a DeepSpeed tag):
 *   `python -m deepspeed.utils.zero_to_fp32 SAVE_DIR TMP --safe_serialization --tag TAG` run with the Python of
 *   the run's accelerate (its environment has DeepSpeed; `--python` names another), then its model.safetensors
 *   (or shards and index), verified.
 *
 * Every checkpoint is verified again first (src/checkpoints/verify.ts); a bad newer one is skipped and
 * named. Files land in DIR as every zerowiz write does: a link in the way is refused before anything is done,
 * an existing file with other content is kept as NAME.bak-<time>, each file is renamed into place whole.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, join, relative } from 'node:path';
import { runBounded } from '../proc/index.js';
import { fileError, RunError, UsageError } from '../text/index.js';
import { pathFlag } from '../fs/index.js';
import { readLatest } from '../checkpoints/index.js';
import { NO_EXPECTATION, type Expectation } from '../checkpoints/index.js';
import { verifyFound, type FoundCheckpoint } from '../checkpoints/index.js';
import { LORA_LAYOUTS, planLayout, writeRenamed, type ExportLayout } from '../checkpoints/index.js';
import { foreignCheckpointsOf, runCheckpointCandidates, stepWindows } from '../checkpoints/index.js';
import { readSafetensorsHeader } from '../checkpoints/index.js';
import { pythonOfAccelerate } from '../checkpoints/index.js';
import { loraLayoutOf, verifyWeightsFile, type CheckpointVerdict } from '../checkpoints/index.js';
import { printable, shellJoin } from '../text/index.js';
import { recordKinds } from './run-kinds.js';
import { findRunRecord, listRunRecords, type RunRecord } from '../records/index.js';
import { parseInteger } from '../text/index.js';
import { formatWrite, withDirLocks, type WriteResult } from '../fs/index.js';
import { timestamp } from '../text/index.js';
import * as output from './output.js';

/** Raw flag values of `export weights`. */
export interface ExportWeightsFlags {
  out?: string;
  step?: string;
  layout?: string;
  python?: string;
}

/** How long zero_to_fp32 may take: a large model's consolidation reads every shard (an hour is generous). */
export const ZERO_TO_FP32_TIMEOUT_MS = 3_600_000;

/** One file to put into DIR: made by `make` into a temp path there, then renamed into place. */
interface Output {
  name: string;
  make: (tmp: string) => Promise<void>;
  /** The line under the write: what layout and from where. */
  note: string;
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return printable(rel.startsWith('..') ? path : rel);
}

function tmpName(dir: string, name: string): string {
  return join(dir, `.${name}.zerowiz-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Refuses a target that is a link, a directory or a special file (before anything is made). */
function checkTarget(path: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (st.isSymbolicLink())
    throw new UsageError(
      `cannot write ${path}: it is a symbolic link (to ${readlinkSync(path)}); zerowiz never writes through a link`,
      'remove the link, or export somewhere else',
    );
  if (!st.isFile())
    throw new UsageError(
      `cannot write ${path}: it is not a regular file`,
      'move it out of the way, or export elsewhere',
    );
}

function sameContent(a: string, b: string): boolean {
  if (statSync(a).size !== statSync(b).size) return false;
  const fa = openSync(a, 'r');
  const fb = openSync(b, 'r');
  try {
    const ba = Buffer.alloc(1 << 20);
    const bb = Buffer.alloc(1 << 20);
    for (let pos = 0; ; pos += ba.length) {
      const na = readSync(fa, ba, 0, ba.length, pos);
      const nb = readSync(fb, bb, 0, bb.length, pos);
      if (na !== nb || !ba.subarray(0, na).equals(bb.subarray(0, nb))) return false;
      if (na === 0) return true;
    }
  } finally {
    closeSync(fa);
    closeSync(fb);
  }
}

/** Renames `tmp` over `target` under DIR's lock: a differing old file is kept as NAME.bak-<time> first. */
function install(tmp: string, target: string): WriteResult {
  checkTarget(target);
  let exists = true;
  try {
    statSync(target);
  } catch {
    exists = false;
  }
  if (exists && sameContent(tmp, target)) {
    unlinkSync(tmp);
    return { path: target, status: 'unchanged' };
  }
  let backup: string | undefined;
  if (exists) {
    const base = `${target}.bak-${timestamp()}`;
    for (let i = 0; ; i++) {
      const name = i === 0 ? base : `${base}-${i}`;
      try {
        linkSync(target, name);
        backup = name;
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
  }
  renameSync(tmp, target);
  return { path: target, status: exists ? 'updated' : 'created', ...(backup ? { backup } : {}) };
}

/** A verdict's reason without the checkpoint's own name in front (the caller names it). */
function ownReason(v: CheckpointVerdict): string {
  const name = basename(v.path);
  for (const lead of [`${name}: `, `${name}/`]) if (v.reason.startsWith(lead)) return v.reason.slice(lead.length);
  return v.reason;
}

/** Picks the checkpoint: step N's, or the newest good one; the bad newer ones are returned to be named. */
function choose(
  runId: string,
  candidates: { found: FoundCheckpoint; expect: Expectation }[],
  step: number | null,
): {
  chosen: { found: FoundCheckpoint; expect: Expectation; verdict: CheckpointVerdict };
  skipped: CheckpointVerdict[];
} {
  let list = candidates;
  if (step !== null) {
    list = candidates.filter((c) => c.found.step === step);
    if (list.length === 0) list = candidates.filter((c) => c.found.epoch === step);
    if (list.length === 0)
      throw new UsageError(
        `no checkpoint of step ${step} in run ${runId}`,
        `its checkpoints: ${candidates.map((c) => c.found.name).join(', ')}`,
      );
  }
  const skipped: CheckpointVerdict[] = [];
  for (const c of [...list].reverse()) {
    const verdict = verifyFound(c.found, c.expect);
    if (verdict.verdict === 'ok') return { chosen: { ...c, verdict }, skipped };
    skipped.push(verdict);
  }
  const newest = skipped[0]!;
  throw new UsageError(
    step !== null ? `the checkpoint of step ${step} in run ${runId} is bad` : `no good checkpoint in run ${runId}`,
    `${display(newest.path)}: ${printable(ownReason(newest))}`,
  );
}

/** The Python that runs DeepSpeed's tools: --python, else the one of the run's accelerate. */
function pythonFor(flags: ExportWeightsFlags, acceleratePath: string): string {
  if (flags.python !== undefined && flags.python !== '') return pathFlag('--python', flags.python);
  const py = pythonOfAccelerate(acceleratePath);
  if ('problem' in py)
    throw new UsageError(
      `cannot tell which Python has DeepSpeed: ${py.problem}`,
      'give --python PATH: the Python of the environment the run trained in',
    );
  return py.python;
}

/** Runs zero_to_fp32 on the checkpoint into `work`; returns the weights files it wrote (verified). */
async function zeroToFp32(
  python: string,
  c: { found: FoundCheckpoint; expect: Expectation },
  work: string,
): Promise<string[]> {
  const saveDir = c.found.kind === 'deepspeed' ? c.found.saveDir! : c.found.path;
  const tag = c.found.kind === 'deepspeed' ? c.found.name : readLatest(c.found.path);
  if (tag === null) throw new UsageError(`${display(c.found.path)} has no DeepSpeed tag to consolidate`);
  const argv = ['-m', 'deepspeed.utils.zero_to_fp32', saveDir, work, '--safe_serialization', '--tag', tag];
  // Bounded in time and in its own process group (../proc/bounded.ts); stdout and stderr read together for the tail.
  const r = await runBounded(python, argv, { timeoutMs: ZERO_TO_FP32_TIMEOUT_MS });
  if (r.error)
    throw new UsageError(
      `cannot run ${python}: ${r.error.code === 'ENOENT' ? 'not found' : r.error.message}`,
      'give --python PATH: the Python of the environment the run trained in',
    );
  if (r.code !== 0) {
    const last = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-3).join(' / ');
    const how = r.timedOut ? `did not finish within ${ZERO_TO_FP32_TIMEOUT_MS / 1000} s` : `exit ${r.code ?? r.signal}`;
    throw new RunError(`zero_to_fp32 failed on ${display(saveDir)} (tag ${tag}, ${how}): ${printable(last)}`);
  }
  const files = readdirSync(work)
    .filter((n) => n.endsWith('.safetensors') || n.endsWith('.safetensors.index.json'))
    .sort();
  const weights = files.filter((n) => n.endsWith('.safetensors'));
  if (weights.length === 0) throw new RunError(`zero_to_fp32 wrote no safetensors file into ${work}`);
  const expect: Expectation = { ...NO_EXPECTATION, modelParams: weights.length === 1 ? c.expect.modelParams : null };
  for (const w of weights) {
    const v = verifyWeightsFile(join(work, w), expect);
    if (v.verdict === 'bad') throw new RunError(`what zero_to_fp32 wrote is bad: ${printable(v.reason)}`);
  }
  return files.map((n) => join(work, n));
}

/** The files of a checkpoint folder a tool loads (weights, their index, an adapter's config), as saved. */
function folderWeights(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.safetensors') || n.endsWith('.safetensors.index.json') || n === 'adapter_config.json')
    .sort()
    .map((n) => join(dir, n));
}

/**
 * Why a run has nothing to export: its steps never trained, or saved nothing while they ran; and whose the
 * files in its output folders are (the newest another run wrote, with the command that exports it).
 */
function nothingSaved(rec: RunRecord, out: string, all: readonly RunRecord[]): UsageError {
  const trained = stepWindows(rec).some((w) => w !== null);
  const what = trained
    ? `run ${rec.json.id} saved no checkpoint while its steps ran`
    : `run ${rec.json.id} saved no checkpoint: its steps never trained`;
  const others = foreignCheckpointsOf(rec, all);
  const owned = others.filter((o) => o.owners.length > 0).at(-1);
  if (owned) {
    const owner = owned.owners[0]!;
    return new UsageError(
      what,
      `${display(owned.path)} is run ${owner}'s (written while it trained): ${shellJoin(['zerowiz', 'export', 'weights', owner, '--out', out])}`,
    );
  }
  const unknown = others.at(-1);
  if (unknown)
    return new UsageError(
      what,
      `${display(unknown.path)} was written while no run here was training: it is no run's that zerowiz knows, so it is not exported`,
    );
  return new UsageError(
    what,
    '`zerowiz runs` lists what each run saved; a step saves where its --output_path or --output_dir says',
  );
}

/** `zerowiz export weights`; resolves with the exit code. */
export async function exportWeightsCommand(ref: string, flags: ExportWeightsFlags): Promise<number> {
  if (flags.out === undefined || flags.out === '')
    throw new UsageError('export weights needs --out DIR', `e.g. zerowiz export weights ${ref} --out ./weights`);
  const out = pathFlag('--out', flags.out);
  const layout = (flags.layout ?? 'comfyui') as ExportLayout;
  if (!LORA_LAYOUTS.includes(layout))
    throw new UsageError(
      `--layout '${flags.layout}' is not a layout zerowiz writes`,
      `choose ${LORA_LAYOUTS.join(', ')}`,
    );
  const step = flags.step === undefined ? null : parseInteger(flags.step, '--step', 0);
  const kinds = await recordKinds();
  const rec = findRunRecord(ref, process.cwd(), kinds.check, kinds.aliases);
  const candidates = runCheckpointCandidates(rec);
  if (candidates.length === 0) throw nothingSaved(rec, flags.out, listRunRecords(process.cwd(), kinds.check).records);
  const { chosen, skipped } = choose(rec.json.id, candidates, step);
  for (const s of skipped)
    output.warn(`${display(s.path)} is bad (${printable(ownReason(s))}); exporting an older one`);
  const from = `from ${display(chosen.found.path)} (ok: ${printable(ownReason(chosen.verdict))})`;

  const outputs: Output[] = [];
  let work: string | null = null;
  if (chosen.found.kind === 'weights') {
    const src = chosen.found.path;
    const h = readSafetensorsHeader(src);
    const lora = h.ok && loraLayoutOf(h.header.tensors.map((t) => t.name)) !== null;
    const plan = h.ok && lora ? planLayout(h.header.tensors, layout) : null;
    if (plan && 'cannot' in plan)
      throw new UsageError(
        `cannot write ${display(src)} in the ${layout} layout: ${printable(plan.cannot)}`,
        `--layout diffsynth exports it as saved; for FLUX, DiffSynth's --align_to_opensource_format saves the open-source names as it trains`,
      );
    outputs.push(
      plan
        ? {
            name: basename(src),
            make: async (tmp) => {
              await writeRenamed(src, tmp, plan.rename, { 'zerowiz.layout': layout }, plan.add);
            },
            note: `${plan.description}; ${from}`,
          }
        : { name: basename(src), make: async (tmp) => copyFileSync(src, tmp), note: `as saved; ${from}` },
    );
  } else if (chosen.verdict.hasWeights) {
    for (const f of folderWeights(chosen.found.path))
      outputs.push({ name: basename(f), make: async (tmp) => copyFileSync(f, tmp), note: `as saved; ${from}` });
  } else {
    const python = pythonFor(flags, rec.json.accelerate.path);
    // zero_to_fp32's names: refuse a link in the way before it runs (shards are checked as they come).
    checkTarget(join(out, 'model.safetensors'));
    checkTarget(join(out, 'model.safetensors.index.json'));
    mkdirSync(out, { recursive: true });
    work = join(out, `.zerowiz-export-${process.pid}-${randomBytes(4).toString('hex')}`);
    mkdirSync(work);
    try {
      const files = await zeroToFp32(python, chosen, work);
      for (const f of files)
        outputs.push({
          name: basename(f),
          make: async (tmp) => renameSync(f, tmp),
          note: `fp32 weights consolidated by zero_to_fp32 (${python} -m deepspeed.utils.zero_to_fp32); ${from}`,
        });
    } catch (e) {
      rmSync(work, { recursive: true, force: true });
      throw e;
    }
  }

  for (const o of outputs) checkTarget(join(out, o.name));
  try {
    mkdirSync(out, { recursive: true });
  } catch (e) {
    throw fileError(e, out, 'cannot create');
  }
  const results: { r: WriteResult; note: string }[] = [];
  try {
    for (const o of outputs) {
      const tmp = tmpName(out, o.name);
      try {
        await o.make(tmp);
        const r = await withDirLocks([out], () => install(tmp, join(out, o.name)));
        results.push({ r, note: o.note });
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e instanceof UsageError || e instanceof RunError ? e : fileError(e, join(out, o.name), 'cannot write');
      }
    }
  } finally {
    if (work !== null) rmSync(work, { recursive: true, force: true });
  }
  for (const { r, note } of results) {
    output.lines([formatWrite(r, display), `  ${note}`]);
  }
  return 0;
}
