/**
 * The ZeRO paper's figure 1, computed for this user's model and GPUs: what each GPU (and each node's CPU
 * or NVMe) holds of the parameters, the gradients and the optimizer states (fp32 master weights, momentum,
 * variance), each piece a column as wide as its share of the model states, sharded pieces drawn as 1/N
 * slices (this GPU's slice filled, the others dotted), offloaded pieces on the CPU/NVMe rows, and the
 * per-step traffic between them labelled. Pure: the estimator supplies the breakdown, the view paints the
 * returned rows (roles become colours; without colour the glyphs alone carry the picture).
 */
import { clip, padEnd, padStart, wrap } from '../text/index.js';
import { formatBytesCompact } from '../text/index.js';

/** One piece of the model states. */
export type StateKind = 'params' | 'grads' | 'master' | 'momentum' | 'variance';
/** Where a piece lives. */
export type Home = 'gpu' | 'cpu' | 'nvme';

/** One piece of the model states as the estimator splits it. */
export interface StatePiece {
  kind: StateKind;
  /** Bytes per parameter (2 for 16-bit params and grads, 4 for the fp32 master weights, momentum, variance). */
  bytesPerParam: number;
  /** The whole model's bytes of this piece, before any sharding. */
  totalBytes: number;
  home: Home;
  /** Split 1/N over the N data-parallel ranks (each keeps its slice); false: every GPU keeps all of it. */
  sharded: boolean;
  /** The estimator's figure: bytes per GPU (home gpu) or per node (home cpu or nvme). */
  bytes: number;
}

/** How bytes move in one optimizer step. */
export type TrafficKind = 'all-reduce' | 'reduce-scatter' | 'all-gather' | 'pcie' | 'nvme';

/** One flow of bytes per GPU per optimizer step. */
export interface TrafficFlow {
  kind: TrafficKind;
  what: StateKind;
  /** Bytes per GPU per optimizer step. */
  bytesPerStep: number;
  /** For pcie and nvme flows: towards the GPU (or CPU), or away from it. */
  direction?: 'in' | 'out';
  /** When in the step, e.g. `forward`, `backward`, `step`. */
  when?: string;
}

/** The per-mode breakdown the picture draws (the estimator's per-GPU split, with where each piece lives). */
export interface ZeroBreakdown {
  /** The mode as the table names it, e.g. `ZeRO-3 offload`. */
  label: string;
  gpusPerNode: number;
  nodes: number;
  pieces: StatePiece[];
  traffic: TrafficFlow[];
  /** Working buffers per GPU besides the states (ZeRO-3 gathers whole layers), bytes; 0 or absent if none. */
  gpuBufferBytes?: number;
  /** Communication of plain DDP per GPU per step: what "1x" is in the table's comm column. */
  ddpBytesPerStep?: number;
  /** The table's GPU peak for this mode (the states and buffers plus the CUDA context, activations, margin). */
  gpuPeakBytes?: number;
  /** The mode's step time in words (`9.1-12 s/step, bound by compute`), drawn under the traffic. */
  stepTime?: string;
}

/** The colour role of a run of text (null: plain). */
export type PictureRole = StateKind | 'dim' | 'title' | 'traffic';

/** A run of text with one role. */
export interface Segment {
  text: string;
  role: PictureRole | null;
}

/** A figure the picture shows, with the bytes it stands for (tests compare them with the input). */
export interface PictureFigure {
  row: 'gpu' | 'cpu' | 'nvme' | 'traffic';
  kind: StateKind | 'total' | 'peak' | TrafficKind;
  bytes: number;
  text: string;
}

/** What to draw. */
export interface PictureOptions {
  width: number;
  height: number;
  color: boolean;
}

/** The drawing: rows of segments, each row at most `width` columns, at most `height` rows. */
export interface Picture {
  lines: Segment[][];
  figures: PictureFigure[];
}

const ORDER: readonly StateKind[] = ['params', 'grads', 'master', 'momentum', 'variance'];
const TITLES: Record<StateKind, [string, string]> = {
  params: ['params', 'parameters'],
  grads: ['grads', 'gradients'],
  master: ['master', 'fp32 master weights'],
  momentum: ['momentum', 'Adam momentum'],
  variance: ['variance', 'Adam variance'],
};

/**
 * DeepSpeed's fp32 gradients (4 bytes per parameter, where the optimizer is) come as a second `grads`
 * piece: drawn after the optimizer states they are used with, and named apart from the 16-bit gradients.
 */
function isFp32Grads(p: Pick<StatePiece, 'kind' | 'bytesPerParam'>): boolean {
  return p.kind === 'grads' && p.bytesPerParam === 4;
}
function titleOf(p: StatePiece, wide: boolean): string {
  if (isFp32Grads(p)) return wide ? 'fp32 gradients' : 'fp32grad';
  return TITLES[p.kind][wide ? 1 : 0];
}
function orderOf(p: StatePiece): number {
  return isFp32Grads(p) ? ORDER.length : ORDER.indexOf(p.kind);
}
const LABEL_W = 10;
const TOTAL_W = 10;
const MIN_COL_W = 8;
const HELD = '█';
const OTHER = '·';

/**
 * Column widths proportional to each piece's whole size, none below MIN_COL_W (less when the room is
 * short), together exactly `room`.
 */
function columnWidths(pieces: readonly StatePiece[], room: number): number[] {
  const count = Math.max(1, pieces.length);
  const min = Math.max(3, Math.min(MIN_COL_W, Math.floor(room / count)));
  const weight = pieces.map((p) => Math.max(0, p.totalBytes));
  const widths = pieces.map(() => min);
  // Columns whose share would fall below the minimum get the minimum; the rest share what is left.
  let free = new Set(pieces.map((_, i) => i));
  for (;;) {
    const left = room - pieces.reduce((sum, _, i) => sum + (free.has(i) ? 0 : widths[i]!), 0);
    const total = [...free].reduce((sum, i) => sum + weight[i]!, 0);
    const share = [...free].map((i) => [i, total > 0 ? (left * weight[i]!) / total : left / free.size] as const);
    const small = share.filter(([, w]) => w < min);
    if (small.length === 0 || small.length === free.size) {
      let used = 0;
      for (const [i, w] of share) {
        widths[i] = Math.max(min, Math.floor(w));
        used += widths[i]!;
      }
      // The rounding remainder goes to the columns that lost the most.
      const order = [...share].sort((a, b) => (b[1] % 1) - (a[1] % 1)).map(([i]) => i);
      for (let k = 0; k < left - used && order.length > 0; k++) widths[order[k % order.length]!]! += 1;
      return widths;
    }
    free = new Set([...free].filter((i) => !small.some(([j]) => j === i)));
  }
}

/** The cells of rank `g`'s slice in a strip of `w` cells split N ways (at least one cell). */
function sliceCells(g: number, n: number, w: number): [number, number] {
  const a = Math.floor((g * w) / n);
  const b = Math.max(a + 1, Math.floor(((g + 1) * w) / n));
  return [a, Math.min(b, w)];
}

/** A strip of `w` cells: the ranks in `ranks` hold their slices (or the whole piece when not sharded). */
function strip(
  piece: StatePiece,
  w: number,
  n: number,
  ranks: readonly number[] | 'all' | 'none',
  color: boolean,
): Segment[] {
  const role = (r: PictureRole) => (color ? r : null);
  // Nothing held (DeepSpeed keeps no 16-bit gradient partition when the optimizer is offloaded at stage 2).
  if (ranks === 'none' || piece.bytes === 0) return [{ text: ' '.repeat(w), role: null }];
  if (ranks === 'all' || !piece.sharded) return [{ text: HELD.repeat(w), role: role(piece.kind) }];
  const held = new Array<boolean>(w).fill(false);
  for (const g of ranks) {
    const [a, b] = sliceCells(g, n, w);
    for (let c = a; c < b; c++) held[c] = true;
  }
  const out: Segment[] = [];
  for (const h of held) {
    const seg = { text: h ? HELD : OTHER, role: role(h ? piece.kind : 'dim') };
    const last = out[out.length - 1];
    if (last && last.role === seg.role && last.text[0] === seg.text) last.text += seg.text;
    else out.push(seg);
  }
  return out;
}

function plain(text: string): Segment {
  return { text, role: null };
}

function flowLabel(f: TrafficFlow, short: boolean): string {
  const dir =
    f.kind === 'pcie'
      ? f.direction === 'in'
        ? ' CPU→GPU'
        : ' GPU→CPU'
      : f.kind === 'nvme'
        ? f.direction === 'in'
          ? ' NVMe→CPU'
          : ' CPU→NVMe'
        : '';
  const when = f.when ? ` (${short ? f.when.replace('forward', 'fwd').replace('backward', 'bwd') : f.when})` : '';
  // NVMe moves the optimizer states (master weights and moments) and, with parameter offload, the parameters.
  const what = f.kind === 'nvme' && f.what === 'master' ? (short ? 'optim' : 'optimizer states') : f.what;
  return `${f.kind === 'pcie' || f.kind === 'nvme' ? '' : `${f.kind} `}${what}${dir}${when} ${formatBytesCompact(f.bytesPerStep)}`;
}

/** The picture of one mode's breakdown for `opts.width` x `opts.height`. */
export function drawPicture(b: ZeroBreakdown, opts: PictureOptions): Picture {
  const width = Math.max(40, opts.width);
  const n = Math.max(1, b.gpusPerNode * b.nodes);
  const color = opts.color;
  const role = (r: PictureRole) => (color ? r : null);
  const pieces = [...b.pieces].sort((x, y) => orderOf(x) - orderOf(y));
  const figures: PictureFigure[] = [];
  const wide = width >= 140;

  const room = width - LABEL_W - TOTAL_W - pieces.length - 1;
  const widths = columnWidths(pieces, room);
  const row = (label: string, cells: Segment[][], total: string, totalRole: PictureRole | null = null): Segment[] => {
    const out: Segment[] = [plain(padEnd(clip(label, LABEL_W - 1), LABEL_W))];
    cells.forEach((c) => {
      out.push({ text: '│', role: role('dim') });
      out.push(...c);
    });
    out.push({ text: '│', role: role('dim') });
    out.push({ text: padStart(total, TOTAL_W), role: totalRole });
    return out;
  };
  const textCells = (texts: string[], roles: (PictureRole | null)[] = []) =>
    texts.map((t, i) => [{ text: padEnd(clip(t, widths[i]!), widths[i]!), role: roles[i] ?? null }]);

  // The rows: title, column names, bytes per parameter (dropped first when short of rows); the GPUs; their
  // numbers; the CPU and NVMe blocks; the traffic; the legend (dropped next).
  const nodes = b.nodes > 1 ? `${b.nodes} nodes x ${b.gpusPerNode}` : `1 node x ${b.gpusPerNode}`;
  const title: Segment[] = [
    {
      text: clip(`${b.label} · ${n} GPU${n === 1 ? '' : 's'} (${nodes}) · per GPU and per node`, width),
      role: role('title'),
    },
  ];
  const names = row('', textCells(pieces.map((p) => titleOf(p, wide))), 'total');
  const perParam = row(
    '',
    textCells(pieces.map((p) => `${p.bytesPerParam} B${wide ? '/param' : ''}${p.sharded ? ` 1/${n}` : ''}`)),
    '',
  ).map((x) => ({ ...x, role: x.role ?? role('dim') }));

  const gpuPieces = pieces.filter((p) => p.home === 'gpu');
  const buffers = b.gpuBufferBytes ?? 0;
  const gpuTotal = gpuPieces.reduce((s, p) => s + p.bytes, 0) + buffers;
  const gpuNumbers = pieces.map((p) => (p.home === 'gpu' ? formatBytesCompact(p.bytes) : '-'));
  pieces.forEach((p, i) => {
    if (p.home === 'gpu') figures.push({ row: 'gpu', kind: p.kind, bytes: p.bytes, text: gpuNumbers[i]! });
  });
  figures.push({ row: 'gpu', kind: 'total', bytes: gpuTotal, text: formatBytesCompact(gpuTotal) });
  if (b.gpuPeakBytes !== undefined && b.gpuPeakBytes > gpuTotal)
    figures.push({ row: 'gpu', kind: 'peak', bytes: b.gpuPeakBytes, text: formatBytesCompact(b.gpuPeakBytes) });
  const gpuNumberRow = row('each GPU', textCells(gpuNumbers), formatBytesCompact(gpuTotal), role('title'));

  const hostBlock = (home: 'cpu' | 'nvme'): Segment[][] => {
    const hp = pieces.filter((p) => p.home === home);
    if (hp.length === 0) return [];
    const ranks = Array.from({ length: b.gpusPerNode }, (_, i) => i);
    const cells = pieces.map((p, i) => strip(p, widths[i]!, n, p.home === home ? ranks : 'none', color));
    const total = hp.reduce((s, p) => s + p.bytes, 0);
    const nums = pieces.map((p) => (p.home === home ? formatBytesCompact(p.bytes) : ''));
    pieces.forEach((p, i) => {
      if (p.home === home) figures.push({ row: home, kind: p.kind, bytes: p.bytes, text: nums[i]! });
    });
    figures.push({ row: home, kind: 'total', bytes: total, text: formatBytesCompact(total) });
    const name = home === 'cpu' ? 'CPU' : 'NVMe';
    return [
      row(b.nodes > 1 ? `${name} n0` : name, cells, ''),
      row('per node', textCells(nums), formatBytesCompact(total), role('title')),
    ];
  };
  const cpu = hostBlock('cpu');
  const nvme = hostBlock('nvme');

  // Traffic: collectives between GPUs, then PCIe and NVMe.
  const traffic: Segment[][] = [];
  const collectives = b.traffic.filter((f) => f.kind !== 'pcie' && f.kind !== 'nvme');
  const host = b.traffic.filter((f) => f.kind === 'pcie' || f.kind === 'nvme');
  for (const f of b.traffic)
    figures.push({ row: 'traffic', kind: f.kind, bytes: f.bytesPerStep, text: formatBytesCompact(f.bytesPerStep) });
  const say = (prefix: string, flows: TrafficFlow[], tail = '') => {
    if (flows.length === 0) return;
    const text = `${prefix} ${flows.map((f) => flowLabel(f, !wide)).join(' · ')}${tail}`;
    for (const l of wrap(text, width)) traffic.push([{ text: l, role: role('traffic') }]);
  };
  const commTotal = collectives.reduce((s, f) => s + f.bytesPerStep, 0);
  const ddp =
    b.ddpBytesPerStep && b.ddpBytesPerStep > 0 && commTotal > 0
      ? ` = ${formatBytesCompact(commTotal)} (${Number((commTotal / b.ddpBytesPerStep).toFixed(2))}x DDP; 1x = ${formatBytesCompact(b.ddpBytesPerStep)})`
      : '';
  if (n > 1) say('⇄ GPU↔GPU, per GPU per step:', collectives, ddp);
  else if (collectives.length === 0)
    traffic.push([{ text: clip('⇄ one GPU: nothing moves between GPUs', width), role: role('dim') }]);
  say('↕ GPU↔CPU↔NVMe, per GPU per step:', host);
  if (b.stepTime) for (const l of wrap(`⏱ ${b.stepTime}`, width)) traffic.push([{ text: l, role: role('traffic') }]);

  const legendText = `${HELD} held here · ${OTHER} another GPU's slice · blank: elsewhere${wide ? '' : ' · B: bytes per parameter'}${
    buffers > 0 ? ` · each GPU's total has ${formatBytesCompact(buffers)} of working buffers` : ''
  }`;
  const dimLines = (text: string) => wrap(text, width).map((l) => [{ text: l, role: role('dim') }]);
  // Optional blocks, given up whole (never a sentence cut short) from the last when rows are short.
  const blocks: Segment[][][] = [[perParam], dimLines(legendText)];
  if (b.gpuPeakBytes !== undefined && b.gpuPeakBytes > gpuTotal)
    blocks.push(
      dimLines(
        `The table's GPU peak, ${formatBytesCompact(b.gpuPeakBytes)}, adds the CUDA context, activations and margin.`,
      ),
    );

  // GPU rows get what is left after the fixed rows; optional rows give way first so that up to 8 GPUs
  // show whole; past that, the first GPUs, a line for the rest, and the last.
  const gpuRow = (g: number) => {
    const node = b.nodes > 1 ? ` n${Math.floor(g / b.gpusPerNode)}` : '';
    const cells = pieces.map((p, i) => strip(p, widths[i]!, n, p.home === 'gpu' ? [g] : 'none', color));
    return row(`GPU ${g}${node}`, cells, formatBytesCompact(gpuTotal));
  };
  const fixed = 2 + 1 + cpu.length + nvme.length + traffic.length;
  const want = Math.min(n, 8);
  while (blocks.length > 0 && opts.height - fixed - blocks.flat().length < want) blocks.pop();
  const optional = blocks.flat();
  const keepPerParam = optional[0] === perParam;
  const legendRows = optional.slice(keepPerParam ? 1 : 0);
  const gpuRoom = Math.max(1, opts.height - fixed - optional.length);
  const gpuRows: Segment[][] = [];
  if (n <= gpuRoom) for (let g = 0; g < n; g++) gpuRows.push(gpuRow(g));
  else {
    const head = Math.max(1, gpuRoom - 2);
    for (let g = 0; g < head; g++) gpuRows.push(gpuRow(g));
    const skipped = n - head - (gpuRoom >= 3 ? 1 : 0);
    gpuRows.push([
      {
        text: clip(
          `… ${skipped} more GPU${skipped === 1 ? '' : 's'}, the same, each with its own slice (x ${n} in all)`,
          width,
        ),
        role: role('dim'),
      },
    ]);
    if (gpuRoom >= 3) gpuRows.push(gpuRow(n - 1));
  }

  const lines = [
    title,
    names,
    ...(keepPerParam ? [perParam] : []),
    ...gpuRows,
    gpuNumberRow,
    ...cpu,
    ...nvme,
    ...traffic,
    ...legendRows,
  ];
  return { lines: lines.slice(0, Math.max(1, opts.height)), figures };
}
/** The picture as plain text lines (what a terminal without colour shows). */
export function pictureText(p: Picture): string[] {
  return p.lines.map((l) =>
    l
      .map((s) => s.text)
      .join('')
      .replace(/\s+$/, ''),
  );
}
