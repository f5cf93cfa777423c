/**
 * The topology a checkpoint is written with, and what to do when a relaunch's differs.
 *
 * ZeRO's optimizer states are saved as one file per data-parallel rank (deepspeed.ts), each holding that
 * rank's partition: DeepSpeed loads them only with the same process count, and a ZeRO-3 checkpoint only at
 * ZeRO-3 (stage3.py's partitions are not stage_1_and_2.py's), and looks for `bf16_`-prefixed files when bf16
 * is on (engine.py _get_zero_ckpt_name). Resuming on another GPU count or stage fails or loads wrong states
 * (DeepSpeed#2898, #7628; accelerate#784: "resuming with less GPUs ... is not supported"). DeepSpeed's way
 * across topologies is Universal Checkpointing (docs/_tutorials/universal-checkpointing.md): convert with
 * `deepspeed/checkpoint/ds_to_universal.py --input_folder TAG --output_folder TAG_universal` (it writes
 * `latest_universal` beside them; `--inject_missing_state` adds the universal-checkpoint info HF and accelerate
 * checkpoints lack: allenai/open-instruct#1517), then resume with `"checkpoint": {"load_universal": true}` in the
 * DeepSpeed JSON (engine.load_checkpoint then reads `latest_universal`). For weights only (no optimizer
 * state), `deepspeed/utils/zero_to_fp32.py SAVE_DIR OUT --safe_serialization --tag TAG` consolidates them.
 *
 * The run record keeps the topology (run.json `topology`): stage, offload devices, processes, nodes, precision
 * and the installed accelerate, DeepSpeed and torch versions, asked once of the Python of accelerate's entry
 * point. Without a record, a checkpoint's files still say its stage class (3 or 1-2), process count and bf16.
 */
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { runBounded } from '../proc/index.js';
import * as z from 'zod/mini';
import '../text/zod.js';
import { deepMerge } from '../config/index.js';
import { launchMixedPrecision } from '../config/index.js';
import { MODE_INFO } from '../config/index.js';
import { printable } from '../text/index.js';
import type { Setup } from '../config/index.js';
import { placementOfAnswers } from '../estimate/index.js';
import { timestamp } from '../text/index.js';
import type { RunRecord } from '../records/index.js';
import { isGlobalStepTag, LATEST_FILE, LATEST_UNIVERSAL_FILE, readLatest, readTag } from './deepspeed.js';
import { findCheckpoints, outputRoots } from './find.js';
import { storedCheckpoints } from './runs.js';

/** The installed versions, as the Python of accelerate's entry point reports them (null: not installed). */
export interface InstalledVersions {
  python: string | null;
  accelerate: string | null;
  deepspeed: string | null;
  torch: string | null;
}

/** How a run writes its checkpoints. */
export interface Topology {
  /** ZeRO stage (0-3). */
  stage: number;
  offloadOptimizer: string;
  offloadParam: string;
  /** Processes over all nodes (accelerate's num_processes). */
  worldSize: number;
  nodes: number;
  /** What DeepSpeed trains in: bf16, fp16, fp32 (or fp8). */
  precision: string;
  versions: InstalledVersions | null;
  /** Why the versions are not known, or null. */
  versionsProblem: string | null;
}

/** A saved checkpoint's topology: a record's (whole) or what its files say (stage class, processes, bf16). */
export interface SavedTopology {
  source: 'record' | 'files';
  stage: number | null;
  /** ZeRO-3 or ZeRO-1/2, when only the files say it. */
  stageClass: '3' | '1-2' | null;
  offloadOptimizer: string | null;
  offloadParam: string | null;
  worldSize: number | null;
  nodes: number | null;
  /** From files: 'bf16', or 'fp16 or fp32' (no bf16_ prefix). */
  precision: string | null;
  versions: InstalledVersions | null;
}

/** The parts of the topology a setup decides (the versions are asked of the installed Python). */
export function topologyOfSetup(setup: Setup): Omit<Topology, 'versions' | 'versionsProblem'> {
  const a = setup.answers;
  const placement = placementOfAnswers(a);
  const launch = launchMixedPrecision(setup);
  const mixed = a.mixed_precision === 'auto' ? (launch ?? 'no') : a.mixed_precision;
  return {
    stage: MODE_INFO[a.mode].stage,
    offloadOptimizer: placement.optimizer,
    offloadParam: placement.stage === 3 ? placement.param : 'none',
    worldSize: a.num_processes,
    nodes: Math.max(1, a.num_machines),
    precision: mixed === 'no' ? 'fp32' : mixed,
  };
}

/** The Python an accelerate executable runs with (its `#!` line, or pip's `'''exec' PYTHON` form), or why not. */
export function pythonOfAccelerate(acceleratePath: string): { python: string } | { problem: string } {
  let head: string;
  try {
    head = readFileSync(acceleratePath).subarray(0, 4096).toString('utf8');
  } catch (err) {
    return { problem: `cannot read ${acceleratePath} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const first = head.split('\n')[0] ?? '';
  const pip = /^'''exec' '([^']+)' "\$0" "\$@"$/m.exec(head);
  if (first.startsWith('#!/bin/sh') && pip) return { python: pip[1]! };
  const m = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(first);
  if (m) {
    const prog = m[1]!.endsWith('/env') && m[2] ? m[2] : m[1]!;
    if (/(^|\/)python[0-9.]*$/.test(prog)) return { python: prog };
  }
  return {
    problem: `accelerate at ${acceleratePath} is not a Python entry point (its first line is ${JSON.stringify(first.slice(0, 80))})`,
  };
}

/** How long the version question may take (importlib.metadata only: no torch import, well under a second). */
export const VERSIONS_TIMEOUT_MS = 15_000;

const VERSIONS_PY = [
  'import json, sys',
  'from importlib import metadata as m',
  'def v(n):',
  '    try:',
  '        return m.version(n)',
  '    except Exception:',
  '        return None',
  'print(json.dumps({"python": sys.version.split()[0], "accelerate": v("accelerate"), "deepspeed": v("deepspeed"), "torch": v("torch")}))',
].join('\n');

/** Asks `python` once for the installed accelerate, DeepSpeed and torch versions. Never throws. */
export async function installedVersions(
  python: string,
  env: NodeJS.ProcessEnv = process.env,
  signal?: AbortSignal,
): Promise<{ versions: InstalledVersions } | { problem: string }> {
  try {
    const r = await runBounded(python, ['-c', VERSIONS_PY], { env, timeoutMs: VERSIONS_TIMEOUT_MS, signal });
    if (r.timedOut) return { problem: `${python} did not answer within ${VERSIONS_TIMEOUT_MS / 1000} s` };
    if (r.code !== 0) {
      const why = r.stderr.trim().split('\n').at(-1) ?? '';
      if (r.error) return { problem: `cannot run ${python}: ${r.error.code ?? r.error.message}` };
      return { problem: `${python} exited with ${r.code !== null ? `code ${r.code}` : r.signal}: ${why}` };
    }
    const line =
      String(r.stdout ?? '')
        .trim()
        .split('\n')
        .at(-1) ?? '';
    const j = JSON.parse(line) as Record<string, unknown>;
    const s = (k: string) => (typeof j[k] === 'string' ? (j[k] as string) : null);
    return {
      versions: { python: s('python'), accelerate: s('accelerate'), deepspeed: s('deepspeed'), torch: s('torch') },
    };
  } catch (err) {
    return { problem: `cannot ask ${python} for the versions: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** The whole topology of a launch: the setup's, and the versions the Python of its accelerate reports. */
export async function captureTopology(
  setup: Setup,
  acceleratePath: string,
  env: NodeJS.ProcessEnv = process.env,
  signal?: AbortSignal,
): Promise<Topology> {
  const base = topologyOfSetup(setup);
  const py = pythonOfAccelerate(acceleratePath);
  if ('problem' in py) return { ...base, versions: null, versionsProblem: py.problem };
  const v = await installedVersions(py.python, env, signal);
  return 'problem' in v
    ? { ...base, versions: null, versionsProblem: v.problem }
    : { ...base, versions: v.versions, versionsProblem: null };
}

const versionsSchema = z.object({
  python: z.nullable(z.string()),
  accelerate: z.nullable(z.string()),
  deepspeed: z.nullable(z.string()),
  torch: z.nullable(z.string()),
});

/** Schema of run.json's `topology`. */
export const topologyJsonSchema = z.object({
  stage: z.int(),
  offloadOptimizer: z.string(),
  offloadParam: z.string(),
  worldSize: z.int(),
  nodes: z.int(),
  precision: z.string(),
  versions: z.nullable(versionsSchema),
  versionsProblem: z.nullable(z.string()),
  capturedAt: z.string(),
});

/** Puts the run's topology in its record (the caller saves run.json). */
export function recordTopology(rec: RunRecord, t: Topology, at = new Date()): void {
  rec.json.topology = { ...t, capturedAt: at.toISOString() };
}

/** A record's topology, or null when it has none (or it does not read). */
export function recordedTopology(rec: Pick<RunRecord, 'json'>): Topology | null {
  const parsed = z.safeParse(topologyJsonSchema, rec.json.topology);
  if (!parsed.success) return null;
  const { capturedAt: _, ...t } = parsed.data;
  return t;
}

/** One difference between a saved topology and a relaunch's. */
export interface TopologyDiff {
  key:
    | 'stage'
    | 'worldSize'
    | 'precision'
    | 'offloadOptimizer'
    | 'offloadParam'
    | 'nodes'
    | 'accelerate'
    | 'deepspeed'
    | 'torch';
  saved: string;
  now: string;
  /** Whether DeepSpeed cannot resume across it (see the module comment). */
  blocking: boolean;
}

const zeroClass = (stage: number | null, cls: '3' | '1-2' | null = null): '3' | '1-2' | null =>
  stage !== null ? (stage === 3 ? '3' : '1-2') : cls;

/** A saved topology as `files` or `record` gives it, from a whole Topology. */
export function savedFrom(t: Topology): SavedTopology {
  return {
    source: 'record',
    stage: t.stage,
    stageClass: zeroClass(t.stage),
    offloadOptimizer: t.offloadOptimizer,
    offloadParam: t.offloadParam,
    worldSize: t.worldSize,
    nodes: t.nodes,
    precision: t.precision,
    versions: t.versions,
  };
}

/** What differs between the topology a checkpoint was written with and a relaunch's. */
export function compareTopology(saved: SavedTopology | Topology, now: Topology): TopologyDiff[] {
  const s = 'source' in saved ? saved : savedFrom(saved);
  const out: TopologyDiff[] = [];
  const sc = zeroClass(s.stage, s.stageClass);
  if (sc !== null && (s.stage === null ? sc !== zeroClass(now.stage) : s.stage !== now.stage))
    out.push({
      key: 'stage',
      saved: s.stage === null ? (sc === '3' ? '3' : '1 or 2') : String(s.stage),
      now: String(now.stage),
      blocking: sc !== zeroClass(now.stage),
    });
  if (s.worldSize !== null && s.worldSize !== now.worldSize)
    out.push({ key: 'worldSize', saved: String(s.worldSize), now: String(now.worldSize), blocking: true });
  if (s.precision !== null && s.precision !== now.precision) {
    const bf = (p: string) => p === 'bf16';
    if (s.source === 'record' || bf(s.precision) !== bf(now.precision))
      out.push({
        key: 'precision',
        saved: s.precision,
        now: now.precision,
        blocking: bf(s.precision) !== bf(now.precision),
      });
  }
  for (const key of ['offloadOptimizer', 'offloadParam', 'nodes'] as const) {
    const a = s[key];
    if (a !== null && String(a) !== String(now[key]))
      out.push({ key, saved: String(a), now: String(now[key]), blocking: false });
  }
  for (const key of ['accelerate', 'deepspeed', 'torch'] as const) {
    const a = s.versions?.[key] ?? null;
    const b = now.versions?.[key] ?? null;
    if (a !== null && b !== null && a !== b) out.push({ key, saved: a, now: b, blocking: false });
  }
  return out;
}

/** A topology in words: `ZeRO-3 offload (optimizer cpu, params cpu), 8 processes on 1 node, bf16, DeepSpeed 0.19.6`. */
export function describeTopology(t: SavedTopology | Topology): string {
  const s = 'source' in t ? t : savedFrom(t);
  const stage = s.stage !== null ? `ZeRO-${s.stage}` : s.stageClass === '3' ? 'ZeRO-3' : 'ZeRO-1 or 2';
  const off = [
    s.offloadOptimizer && s.offloadOptimizer !== 'none' ? `optimizer ${s.offloadOptimizer}` : null,
    s.offloadParam && s.offloadParam !== 'none' ? `params ${s.offloadParam}` : null,
  ].filter((x) => x !== null);
  const parts = [
    `${stage}${off.length > 0 ? ` offload (${off.join(', ')})` : ''}`,
    s.worldSize !== null
      ? `${s.worldSize} process${s.worldSize === 1 ? '' : 'es'}${s.nodes !== null ? ` on ${s.nodes} node${s.nodes === 1 ? '' : 's'}` : ''}`
      : null,
    s.precision,
    s.versions?.deepspeed ? `DeepSpeed ${s.versions.deepspeed}` : null,
  ].filter((x) => x !== null);
  return parts.join(', ');
}

/** A command of the optional extra pipeline step zerowiz can run (argv[0] the program: the user's Python). */
export interface ExtraStep {
  name: string;
  argv: string[];
  /** One sentence: what it does and why. */
  why: string;
}

/** A checkpoint a relaunch would resume from, written with a topology that cannot resume on this one. */
export interface TopologyCheck {
  /** The DeepSpeed tag folder. */
  checkpoint: string;
  saveDir: string;
  tag: string;
  saved: SavedTopology;
  now: Topology;
  diffs: TopologyDiff[];
  /** The warning, naming both topologies and the ways forward. */
  warning: string;
  /** Convert to a Universal Checkpoint (then resume with withLoadUniversal(setup)). */
  universal: ExtraStep[];
  /** Consolidated fp32 weights only (no optimizer state). */
  fp32: ExtraStep;
  /** What starting fresh moves aside (setAside): the save folder's tags and its `latest`. */
  fresh: string[];
}

/** The setup with `"checkpoint": {"load_universal": true}` in its DeepSpeed JSON (resume from latest_universal). */
export function withLoadUniversal(setup: Setup): Setup {
  const json = deepMerge({ ...(setup.extra?.json ?? {}) }, { checkpoint: { load_universal: true } });
  return { ...setup, extra: { ...(setup.extra ?? {}), json } };
}

/**
 * Moves each path aside to `PATH.set-aside-<YYYYmmdd-HHMMSS>` (then `-1`, `-2`, ...: never over an earlier one),
 * deleting nothing; a link is moved itself, not what it points to. Returns what moved where.
 */
export function setAside(paths: readonly string[], now = new Date()): { from: string; to: string }[] {
  const out: { from: string; to: string }[] = [];
  for (const from of paths) {
    if (!existsSync(from)) continue;
    const base = `${from}.set-aside-${timestamp(now)}`;
    let to = base;
    for (let i = 1; existsSync(to); i++) to = `${base}-${i}`;
    renameSync(from, to);
    out.push({ from, to });
  }
  return out;
}

/** The DeepSpeed tag a resume from `root` would load: `latest` of the folder, else of its newest checkpoint folder. */
function resumeTags(root: string): { saveDir: string; tag: string; fresh: string[] }[] {
  const out: { saveDir: string; tag: string; fresh: string[] }[] = [];
  const found = findCheckpoints(root);
  const own = readLatest(root);
  if (own !== null && existsSync(join(root, own))) {
    const tags = found.filter((c) => c.kind === 'deepspeed').map((c) => c.path);
    out.push({ saveDir: root, tag: own, fresh: [...tags, join(root, LATEST_FILE)] });
  }
  for (const kind of ['hf-checkpoint', 'accelerate-checkpoint'] as const) {
    const folders = found.filter((c) => c.kind === kind);
    const newest = folders.at(-1);
    if (!newest) continue;
    const tag = readLatest(newest.path);
    if (tag !== null && existsSync(join(newest.path, tag)))
      out.push({ saveDir: newest.path, tag, fresh: folders.map((f) => f.path) });
  }
  return out;
}

/** The topology a run record kept for a checkpoint (by its tag folder or the checkpoint folder holding it). */
function fromRecords(tagDir: string, records: readonly Pick<RunRecord, 'json'>[]): SavedTopology | null {
  for (const r of records) {
    const t = recordedTopology(r);
    if (!t) continue;
    const items = storedCheckpoints(r as RunRecord) ?? [];
    const listed = items.some((c) => c.path === tagDir || c.path === dirname(tagDir));
    const raw: unknown = r.json.checkpoints;
    const loose =
      Array.isArray(raw) &&
      raw.some((c: { path?: unknown } | null) => c?.path === tagDir || c?.path === dirname(tagDir));
    if (listed || loose) return savedFrom(t);
  }
  return null;
}

/** What a tag's files say. */
function fromFiles(tagDir: string): SavedTopology | null {
  const t = readTag(tagDir, basename(tagDir));
  if (!t || (t.optimRanks.length === 0 && t.stage === null)) return null;
  return {
    source: 'files',
    stage: null,
    stageClass: t.stage === 3 ? '3' : t.stage === '1-2' ? '1-2' : null,
    offloadOptimizer: null,
    offloadParam: null,
    worldSize: t.optimRanks.length > 0 ? t.optimRanks.length : null,
    nodes: null,
    precision: t.optimRanks.length > 0 ? (t.bf16 ? 'bf16' : 'fp16 or fp32') : null,
    versions: null,
  };
}

/**
 * For a relaunch of `setup` in `cwd` with topology `now`: the DeepSpeed checkpoints in its steps' output folders
 * that a resume would load and that were written with a topology DeepSpeed cannot resume on this one, each with
 * the warning and the ways forward. `python`: the Python of accelerate's entry point (DeepSpeed's tools run from
 * the user's install); `records`: the run records to take saved topologies from (`listRunRecords(cwd)`).
 */
export function relaunchTopologyChecks(
  setup: Setup,
  cwd: string,
  now: Topology,
  python: string | null,
  records: readonly Pick<RunRecord, 'json'>[] = [],
): TopologyCheck[] {
  const py = python ?? 'python3';
  const out: TopologyCheck[] = [];
  const seen = new Set<string>();
  // With "checkpoint": {"load_universal": true}, DeepSpeed resumes from the tag latest_universal names.
  const ckpt = setup.extra?.json?.checkpoint;
  const loadsUniversal =
    typeof ckpt === 'object' && ckpt !== null && (ckpt as Record<string, unknown>).load_universal === true;
  setup.steps.forEach((s) => {
    if (!s.usesConfig) return;
    for (const root of outputRoots(s.args, cwd)) {
      for (const r of resumeTags(root)) {
        const converted = readLatest(r.saveDir, LATEST_UNIVERSAL_FILE);
        if (loadsUniversal && converted !== null && existsSync(join(r.saveDir, converted))) continue;
        const tagDir = join(r.saveDir, r.tag);
        if (seen.has(tagDir)) continue;
        seen.add(tagDir);
        const saved = fromRecords(tagDir, records) ?? fromFiles(tagDir);
        if (!saved) continue;
        const diffs = compareTopology(saved, now);
        if (!diffs.some((d) => d.blocking)) continue;
        const universalDir = `${tagDir}_universal`;
        const accelerateTag = !isGlobalStepTag(r.tag) && basename(r.saveDir).startsWith('checkpoint_');
        const universal: ExtraStep[] = [
          {
            name: 'ds_to_universal',
            argv: [
              py,
              '-m',
              'deepspeed.checkpoint.ds_to_universal',
              '--input_folder',
              tagDir,
              '--output_folder',
              universalDir,
              '--inject_missing_state',
            ],
            why: `convert ${r.tag} to a Universal Checkpoint (${basename(universalDir)}, named by latest_universal), which DeepSpeed loads on any process count or stage with "checkpoint": {"load_universal": true}`,
          },
        ];
        const fp32: ExtraStep = {
          name: 'zero_to_fp32',
          argv: [
            py,
            '-m',
            'deepspeed.utils.zero_to_fp32',
            r.saveDir,
            `${tagDir}_fp32`,
            '--safe_serialization',
            '--tag',
            r.tag,
          ],
          why: `consolidate ${r.tag}'s weights into ${basename(tagDir)}_fp32/model.safetensors (fp32, no optimizer state): start from those weights on the new topology`,
        };
        const blocking = diffs.filter((d) => d.blocking);
        const what = blocking.map((d) => (d.key === 'worldSize' ? 'process count' : d.key)).join(', ');
        const told = diffs
          .filter((d) => !d.blocking)
          .map((d) => `${d.key} ${d.saved} -> ${d.now}`)
          .join(', ');
        const warning = printable(
          [
            `the checkpoint a resume would load, ${tagDir} (${r.tag}), was written with ${describeTopology(saved)} (${saved.source === 'record' ? 'zerowiz run record' : 'read from its files'}); this launch runs ${describeTopology(now)}.`,
            `DeepSpeed cannot resume ZeRO states across a different ${what} (DeepSpeed#2898, #7628; accelerate#784): the resume fails or loads the wrong partitions.${told ? ` Also different: ${told}.` : ''}`,
            `Ways forward: convert it to a Universal Checkpoint and resume with load_universal (zerowiz runs \`${universal[0]!.argv.join(' ')}\` as an extra step and sets "checkpoint": {"load_universal": true} in the DeepSpeed JSON)${accelerateTag ? `; accelerate's load_state names the tag ${r.tag} itself, so put the universal folder in its place afterwards` : ''};`,
            `or take the weights only (\`${fp32.argv.join(' ')}\`);`,
            `or start fresh: the old checkpoints are moved aside (${r.fresh.map((p) => basename(p)).join(', ')} -> *.set-aside-<time>), nothing is deleted.`,
          ].join(' '),
        );
        out.push({
          checkpoint: tagDir,
          saveDir: r.saveDir,
          tag: r.tag,
          saved,
          now,
          diffs,
          warning,
          universal,
          fp32,
          fresh: r.fresh,
        });
      }
    }
  });
  return out;
}

/** Schema of run.json's `topologyWarnings` (kept when there was no terminal to ask). */
export const topologyWarningsJsonSchema = z.array(z.object({ checkpoint: z.string(), warning: z.string() }));
