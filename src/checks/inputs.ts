/**
 * The input checks: `inputs` (each pass's training script; for a DiffSynth-Studio pass its dataset folder and
 * metadata file, the metadata's columns and the first rows' files, or the cached `.pth` files a training
 * pass reads without metadata) and `models` (the models a DiffSynth pass loads: `model_id:pattern` entries are
 * looked up where DiffSynth keeps them, `$DIFFSYNTH_MODEL_BASE_PATH` or `./models/<model_id>/`, as
 * diffsynth/core/loader/config.py ModelConfig does; missing ones are downloaded when the pass starts unless
 * DIFFSYNTH_SKIP_DOWNLOAD=true). Paths that an earlier pass writes are not required.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { formatBytesShort } from '../text/index.js';
import type { CheckPlan, ModelRef, StepPlan } from './plan.js';
import { underPath } from './plan.js';
import { type CheckResult, failed, passed, warned } from './types.js';

/** Rows of a metadata file whose files are checked. */
export const METADATA_SAMPLE_ROWS = 50;
/** Bytes of a metadata file read for its header and sample rows. */
const METADATA_READ_BYTES = 256 * 1024;
/** Folder entries walked when counting cached `.pth` files or matching a model pattern. */
const WALK_MAX_ENTRIES = 20_000;

function stat(p: string) {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

function head(path: string, bytes: number): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** The records of CSV text (RFC 4180 quoting; a last record cut off by the read is dropped). */
export function parseCsv(text: string, maxRecords: number): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const complete = text.endsWith('\n');
  while (i < text.length && rows.length < maxRecords) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  if (rows.length < maxRecords && (field !== '' || row.length > 0) && complete) rows.push([...row, field]);
  return rows;
}

/** The metadata's records (CSV, or JSON and JSON lines as DiffSynth reads them): the columns and sample rows. */
export function readMetadata(path: string): { columns: string[]; rows: Record<string, string>[]; truncated: boolean } {
  const text = head(path, METADATA_READ_BYTES);
  const truncated = text.length >= METADATA_READ_BYTES;
  if (path.endsWith('.jsonl') || path.endsWith('.json')) {
    let records: unknown[] = [];
    if (path.endsWith('.jsonl'))
      records = text
        .split('\n')
        .slice(0, METADATA_SAMPLE_ROWS)
        .filter((l) => l.trim() !== '')
        .flatMap((l) => {
          try {
            return [JSON.parse(l)];
          } catch {
            return [];
          }
        });
    else {
      try {
        const all: unknown = JSON.parse(text);
        records = Array.isArray(all) ? all.slice(0, METADATA_SAMPLE_ROWS) : [];
      } catch {
        records = [];
      }
    }
    const rows = records.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null) as Record<
      string,
      unknown
    >[];
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return {
      columns,
      rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? v : '']))),
      truncated,
    };
  }
  const recs = parseCsv(text, METADATA_SAMPLE_ROWS + 1);
  const columns = (recs[0] ?? []).map((c) => c.trim());
  const rows = recs.slice(1).map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? ''])));
  return { columns, rows, truncated };
}

/** Counts `.pth` files under `dir` (DiffSynth's cache), walking at most WALK_MAX_ENTRIES entries. */
export function countCached(dir: string): number {
  let n = 0;
  let seen = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > WALK_MAX_ENTRIES) return;
      const p = join(d, name);
      const s = stat(p);
      if (s?.isDirectory()) walk(p);
      else if (name.endsWith('.pth')) n++;
    }
  };
  walk(dir);
  return n;
}

/** Python's fnmatch of one path segment (`*`, `?`, `[...]`); a leading `.` is matched only by a literal one. */
export function segmentRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = end;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

/** Files matching a relative glob under `root`, as Python's glob.glob(pattern, root_dir=root) (not recursive). */
export function globFiles(root: string, pattern: string): string[] {
  const segs = pattern.split('/').filter((s) => s !== '' && s !== '.');
  let current = [''];
  for (const [k, seg] of segs.entries()) {
    const last = k === segs.length - 1;
    const next: string[] = [];
    const magic = /[*?[]/.test(seg);
    for (const rel of current) {
      const dir = join(root, rel);
      if (!magic) {
        const s = stat(join(dir, seg));
        if (s && (last || s.isDirectory())) next.push(join(rel, seg));
        continue;
      }
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      const re = segmentRegExp(seg);
      for (const name of names.slice(0, WALK_MAX_ENTRIES)) {
        if (name.startsWith('.') && !seg.startsWith('.')) continue;
        if (!re.test(name)) continue;
        const s = stat(join(dir, name));
        if (s && (last || s.isDirectory())) next.push(join(rel, name));
      }
    }
    current = next;
  }
  return segs.length === 0 ? [] : current;
}

/** The pattern as DiffSynth reads it (parse_original_file_pattern): empty or `./` means everything. */
export function diffSynthPattern(p: string): string {
  if (p === '' || p === './') return '*';
  return p.endsWith('/') ? `${p}*` : p;
}

/** Where DiffSynth keeps its models (reset_local_model_path): $DIFFSYNTH_MODEL_BASE_PATH, else ./models. */
export function diffSynthModelBase(cwd: string, env: NodeJS.ProcessEnv): string {
  const b = env.DIFFSYNTH_MODEL_BASE_PATH;
  return b !== undefined ? (isAbsolute(b) ? b : resolve(cwd, b)) : join(cwd, 'models');
}

function fileSize(p: string): number {
  const s = stat(p);
  if (!s) return 0;
  if (!s.isDirectory()) return s.size;
  let n = 0;
  try {
    for (const name of readdirSync(p).slice(0, WALK_MAX_ENTRIES)) n += fileSize(join(p, name));
  } catch {
    // unreadable: counted as empty
  }
  return n;
}

function madeBy(p: string, step: StepPlan): boolean {
  return step.earlierOutputs.some((o) => underPath(p, o));
}

/** One pass's input problems (fail), cautions (warn) and what was found. */
function stepInputs(step: StepPlan): { fail: string[]; warn: string[]; ok: string[] } {
  const fail: string[] = [];
  const warn: string[] = [];
  const ok: string[] = [];
  const tag = `${step.name}:`;
  if (step.scriptPath !== null) {
    const s = stat(step.scriptPath);
    if (s?.isFile()) ok.push(`${tag} ${step.script}`);
    else if (step.scriptMadeEarlier) ok.push(`${tag} ${step.script} (an earlier pass makes it)`);
    else fail.push(`${tag} the script ${step.script} does not exist${s ? ' as a file' : ''}`);
  }
  const d = step.diffsynth;
  if (!d) return { fail, warn, ok };
  if (d.datasetBase === null) fail.push(`${tag} no --dataset_base_path (DiffSynth requires it)`);
  else if (madeBy(d.datasetBase, step)) {
    const s = stat(d.datasetBase);
    if (!s) ok.push(`${tag} ${d.datasetBase} (an earlier pass makes it)`);
    else if (d.metadata === null) {
      const n = countCached(d.datasetBase);
      ok.push(`${tag} ${d.datasetBase}: ${n} cached .pth file(s) so far (an earlier pass writes them)`);
    }
  } else {
    const s = stat(d.datasetBase);
    if (!s?.isDirectory()) fail.push(`${tag} the dataset folder ${d.datasetBase} does not exist`);
    else if (d.metadata === null) {
      const n = countCached(d.datasetBase);
      if (n === 0)
        fail.push(
          `${tag} no --dataset_metadata_path, so DiffSynth reads cached .pth files under ${d.datasetBase}, and there are none (run the data pass first)`,
        );
      else ok.push(`${tag} ${n} cached .pth file(s) under ${d.datasetBase}`);
    }
  }
  if (d.metadata !== null && !madeBy(d.metadata, step)) {
    const s = stat(d.metadata);
    if (!s?.isFile()) fail.push(`${tag} the metadata file ${d.metadata} does not exist`);
    else {
      let meta: ReturnType<typeof readMetadata>;
      try {
        meta = readMetadata(d.metadata);
      } catch (e) {
        fail.push(`${tag} ${d.metadata} cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
        return { fail, warn, ok };
      }
      const keys = d.dataFileKeys.filter((k) => meta.columns.includes(k));
      if (meta.rows.length === 0) fail.push(`${tag} ${d.metadata} has no rows`);
      else if (keys.length === 0)
        fail.push(
          `${tag} ${d.metadata} has the columns ${meta.columns.join(', ')}; DiffSynth loads the files named in ${d.dataFileKeys.join(' or ')} (--data_file_keys)`,
        );
      else {
        const base = d.datasetBase ?? '';
        const missing: string[] = [];
        for (const row of meta.rows)
          for (const k of keys) {
            const v = row[k] ?? '';
            if (v !== '' && !stat(isAbsolute(v) ? v : join(base, v))) missing.push(v);
          }
        if (missing.length > 0)
          fail.push(
            `${tag} ${missing.length} of the first ${meta.rows.length} row(s) of ${d.metadata} name files missing under ${base}: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}`,
          );
        else
          ok.push(
            `${tag} ${d.metadata}: ${meta.rows.length}${meta.truncated ? '+' : ''} row(s) checked, their ${keys.join('/')} files present`,
          );
      }
    }
  }
  return { fail, warn, ok };
}

/** Judges every checked pass's inputs. */
export function judgeInputs(plan: CheckPlan): CheckResult {
  const id = 'inputs';
  const need =
    "each pass's script (run from the current folder); for DiffSynth passes the dataset folder, its metadata and the files it names";
  const all = plan.steps.map(stepInputs);
  const fail = all.flatMap((x) => x.fail);
  const warn = all.flatMap((x) => x.warn);
  const ok = all.flatMap((x) => x.ok);
  const measured = [...fail, ...warn, ...ok].join('; ') || 'no pass reads files zerowiz knows of';
  if (fail.length > 0)
    return failed(
      id,
      `in ${plan.cwd}: ${measured}`,
      need,
      `run zerowiz in the folder the passes run from (the DiffSynth-Studio checkout), or fix the paths in the preset's steps`,
    );
  if (warn.length > 0) return warned(id, `in ${plan.cwd}: ${measured}`, need, 'see above');
  return passed(id, `in ${plan.cwd}: ${measured}`, need);
}

/** What one model entry resolves to. */
interface ModelFound {
  ref: ModelRef;
  step: string;
  files: number;
  bytes: number;
  where: string;
}

function findModel(ref: ModelRef, step: string, base: string): ModelFound {
  if (ref.kind === 'path') {
    const s = stat(ref.path);
    return { ref, step, files: s ? 1 : 0, bytes: s ? fileSize(ref.path) : 0, where: ref.path };
  }
  const root = join(base, ref.modelId);
  const files = globFiles(root, diffSynthPattern(ref.pattern));
  return { ref, step, files: files.length, bytes: files.reduce((n, f) => n + fileSize(join(root, f)), 0), where: root };
}

/** Judges the models of the checked DiffSynth passes. */
export function judgeModels(plan: CheckPlan, env: NodeJS.ProcessEnv): CheckResult {
  const id = 'models';
  const base = diffSynthModelBase(plan.cwd, env);
  const refs = plan.steps.flatMap((s) => (s.diffsynth?.models ?? []).map((r) => ({ r, step: s.name })));
  if (refs.length === 0)
    return passed(id, 'no pass names models zerowiz can look up (DiffSynth-Studio passes only)', 'none');
  const need = `every model a pass loads, in ${base} (DiffSynth's models folder) or downloaded when the pass starts`;
  const found = refs.map(({ r, step }) => findModel(r, step, base));
  const noDownload = (env.DIFFSYNTH_SKIP_DOWNLOAD ?? '').toLowerCase() === 'true';
  const source =
    (env.DIFFSYNTH_DOWNLOAD_SOURCE ?? 'modelscope').toLowerCase() === 'huggingface' ? 'Hugging Face' : 'ModelScope';
  const label = (f: ModelFound) => (f.ref.kind === 'hub' ? f.ref.spec : f.ref.path);
  const present = found.filter((f) => f.files > 0);
  const absent = found.filter((f) => f.files === 0);
  const parts = [
    ...present.map((f) => `${f.step}: ${label(f)}: ${f.files} file(s), ${formatBytesShort(f.bytes)}`),
    ...absent.map((f) => `${f.step}: ${label(f)}: not in ${f.where}`),
  ];
  const measured = parts.join('; ');
  const paths = absent.filter((f) => f.ref.kind === 'path');
  const size = plan.estimate
    ? `; the trained model alone is ${formatBytesShort(plan.estimate.params * 2)} in 16 bit, the other models' sizes are not known to zerowiz`
    : '';
  if (paths.length > 0)
    return failed(id, measured, need, `fix the model paths (${paths.map(label).join(', ')}) in the preset's steps`);
  if (absent.length > 0 && noDownload)
    return failed(
      id,
      `${measured}; DIFFSYNTH_SKIP_DOWNLOAD=true, so DiffSynth will not download them`,
      need,
      `unset DIFFSYNTH_SKIP_DOWNLOAD, or put the files in ${base}/<model id>/`,
    );
  if (absent.length > 0)
    return warned(
      id,
      `${measured}: DiffSynth downloads them from ${source} into ${base} when the pass starts${size}`,
      need,
      `download them first, so the pass does not wait on the network (e.g. \`modelscope download --model ${absent[0]!.ref.kind === 'hub' ? absent[0]!.ref.modelId : 'ID'} --local_dir ${absent[0]!.where}\`), and check the disk has room`,
    );
  return passed(id, measured, need);
}
