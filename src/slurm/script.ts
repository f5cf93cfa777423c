/**
 * The sbatch script of a setup (pure). One job; each pass is one job step: `srun -u --ntasks-per-node=1`
 * runs `accelerate launch` once on every node, with
 *   --num_machines "$SLURM_NNODES"   --num_processes "$NUM_PROCESSES" (nodes x GPUs per node)
 *   --main_process_ip "$MAIN_IP"     (the first host of $SLURM_JOB_NODELIST, `scontrol show hostnames`)
 *   --main_process_port "$MAIN_PORT" (a free port on that node, picked before each pass)
 *   --machine_rank "$SLURM_NODEID"   expanded inside each task, so each node gets its own rank: in the
 *                                    single-quoted `bash -c` program, not by the batch shell (which
 *                                    would give every node rank 0, huggingface/accelerate#2816).
 * A pass starts only when the previous one succeeded. Each pass writes its own log file; the batch shell
 * prints one `zerowiz-step` line when a pass starts and ends, which zerowiz follows.
 */
import { shellJoin, shellWord } from '../quote.js';
import type { LaunchStep } from '../config/setup.js';
import { stepConfig } from '../config/step-args.js';
import { NO_DEEPSPEED_CONFIG_NAME } from '../config/accelerate-config.js';
import { basename } from 'node:path';

/** What a pass's comment says of its config, as its command has it: pinned (which), or none (accelerate's default). */
function passConfigNote(step: LaunchStep): string {
  if (step.usesConfig) return '';
  const c = stepConfig(step);
  if (c.kind !== 'pinned') return " (no --config_file: accelerate's default config on the nodes)";
  return basename(c.path) === NO_DEEPSPEED_CONFIG_NAME
    ? ` (--config_file ${NO_DEEPSPEED_CONFIG_NAME}: without DeepSpeed)`
    : ` (--config_file ${c.path})`;
}
import type { SlurmShape } from './shape.js';

/** What the job asks Slurm for, besides the shape. */
export interface SbatchOptions {
  partition?: string;
  /** Slurm's time format, e.g. 02:00:00 or 1-00:00:00. */
  time?: string;
  account?: string;
  qos?: string;
  /** Further sbatch options, one per `--sbatch-arg` (e.g. `--exclusive`, `--mem=0`). */
  extra: string[];
}

/** The sbatch options of the command-line flags (`--partition`, `--time`, ..., each `--sbatch-arg`). */
export function sbatchOptionsOf(f: {
  partition?: string;
  time?: string;
  account?: string;
  qos?: string;
  sbatchArg?: string[];
}): SbatchOptions {
  return { partition: f.partition, time: f.time, account: f.account, qos: f.qos, extra: f.sbatchArg ?? [] };
}

/** Everything the script is made of. */
export interface ScriptSpec {
  jobName: string;
  shape: SlurmShape;
  options: SbatchOptions;
  /** The directory the job runs in (--chdir): where the step paths are relative to. */
  cwd: string;
  /** The accelerate executable, as the compute nodes find it (an absolute path). */
  accelerate: string;
  /** The accelerate YAML the passes that use a config read (absolute). */
  configFile: string;
  steps: LaunchStep[];
  /** Where the job's output and the pass logs go (absolute). */
  logDir: string;
  /** The job's own output file in logDir (`%j` = job id), and each pass's log file in logDir. */
  jobOutput: string;
  stepLogs: string[];
  /** Prefix each pass's log with the job id (`12-01-train.log`): a script submitted many times by hand. */
  perJobLogs?: boolean;
  /** Comment lines at the top (what zerowiz changed, where the script came from). */
  notes: string[];
}

/** The first port tried for the rendezvous: 20000 + job id mod 10000 keeps jobs on one node apart. */
export const MAIN_PORT_BASE = 20_000;
const MAIN_PORT_SPAN = 10_000;
/** The marker the batch shell prints around each pass. */
export const STEP_MARK = 'zerowiz-step';

/** An `#SBATCH` option refused in extra arguments: zerowiz sets these itself. */
const OWN_OPTIONS = ['--output', '-o', '--error', '-e', '--chdir', '-D', '--parsable', '--job-name', '-J'];

/** Checks one `--sbatch-arg` value; returns an error message or null. */
export function checkSbatchArg(arg: string): string | null {
  if (!arg.startsWith('-')) return `'${arg}' is not an sbatch option (they start with -)`;
  if (/[\n\r]/.test(arg)) return 'an sbatch option cannot span lines';
  const name = arg.split('=')[0]!;
  if (OWN_OPTIONS.includes(name)) return `${name} is set by zerowiz (the job's output goes to the run record)`;
  return null;
}

/** The `#SBATCH` lines of a job (shape, partition, time, account, QOS, extra options). */
export function sbatchDirectives(
  spec: Pick<ScriptSpec, 'jobName' | 'shape' | 'options' | 'cwd'>,
  output: string,
): string[] {
  const o = spec.options;
  const d = [
    `--job-name=${spec.jobName}`,
    `--nodes=${spec.shape.nodes}`,
    '--ntasks-per-node=1',
    `--gres=gpu:${spec.shape.gpusPerNode}`,
    ...(o.partition ? [`--partition=${o.partition}`] : []),
    ...(o.time ? [`--time=${o.time}`] : []),
    ...(o.account ? [`--account=${o.account}`] : []),
    ...(o.qos ? [`--qos=${o.qos}`] : []),
    `--chdir=${spec.cwd}`,
    `--output=${output}`,
    ...o.extra,
  ];
  return d.map((x) => `#SBATCH ${shellWord(x)}`);
}

/** A word of a command line: literal text (quoted as needed) or shell text kept as is. */
export type Word = string | { sh: string };

function joinWords(words: Word[]): string {
  return words.map((w) => (typeof w === 'string' ? shellWord(w) : w.sh)).join(' ');
}

/** Values of the multi-node flags: literal (a per-node command list) or shell text (the sbatch script). */
export interface NodeFlags {
  nodes: Word;
  numProcesses: Word;
  ip: Word;
  port: Word;
}

/**
 * The `accelerate launch` options of a pass on one node, before the training script: the config (when the
 * step uses one) and the multi-node flags. The rank is given apart (it differs per node).
 */
export function passFlags(step: LaunchStep, configFile: string, f: NodeFlags): Word[] {
  return [
    ...(step.usesConfig ? ['--config_file', configFile] : []),
    '--num_machines',
    f.nodes,
    '--num_processes',
    f.numProcesses,
    '--main_process_ip',
    f.ip,
    '--main_process_port',
    f.port,
  ];
}

/** The sbatch script. */
export function sbatchScript(spec: ScriptSpec): string {
  const n = spec.steps.length;
  const out: string[] = [
    '#!/bin/bash',
    ...sbatchDirectives(spec, `${spec.logDir}/${spec.jobOutput}`),
    '#',
    `# ${spec.jobName}: ${n} pass(es) as job steps, in order; a pass starts only if the previous one succeeded.`,
    ...spec.notes.map((l) => `# ${l}`),
    '',
    'set -uo pipefail',
    'export PYTHONUNBUFFERED=1',
    `ACCELERATE=${shellWord(spec.accelerate)}`,
    `LOG_DIR=${shellWord(spec.logDir)}`,
    `GPUS_PER_NODE=${spec.shape.gpusPerNode}`,
    'NUM_PROCESSES=$((SLURM_NNODES * GPUS_PER_NODE))',
    '# The main process runs on the first node of the allocation.',
    'MAIN_IP=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    '',
    '# A TCP port nobody listens on or uses on this (the first) node, starting from a job-specific one.',
    'zw_port_used() { grep -qi ":$(printf \'%04X\' "$1") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; }',
    'zw_free_port() {',
    `  local p=$((${MAIN_PORT_BASE} + SLURM_JOB_ID % ${MAIN_PORT_SPAN}))`,
    '  while zw_port_used "$p"; do p=$((p + 1)); done',
    '  echo "$p"',
    '}',
    `zw_mark() { echo "${STEP_MARK} $* $(date +%s%3N)"; }`,
    '',
    'echo "zerowiz: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST ($SLURM_NNODES node(s) x $GPUS_PER_NODE GPU(s)), main process on $MAIN_IP"',
  ];
  const flags: NodeFlags = {
    nodes: { sh: '"$SLURM_NNODES"' },
    numProcesses: { sh: '"$NUM_PROCESSES"' },
    ip: { sh: '"$MAIN_IP"' },
    port: { sh: '"$MAIN_PORT"' },
  };
  spec.steps.forEach((step, i) => {
    const k = i + 1;
    out.push(
      '',
      `# pass ${k}/${n}: ${step.name}${passConfigNote(step)}`,
      'MAIN_PORT=$(zw_free_port)',
      `zw_mark ${k} start`,
      // $SLURM_NODEID is inside single quotes: each task (one per node) expands its own.
      `srun -u --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'exec "$0" launch --machine_rank "$SLURM_NODEID" "$@"' "$ACCELERATE" \\`,
      `  ${joinWords(passFlags(step, spec.configFile, flags))} \\`,
      `  ${shellJoin(step.args)} \\`,
      `  > "$LOG_DIR"/${spec.perJobLogs ? '"$SLURM_JOB_ID"-' : ''}${shellWord(spec.stepLogs[i]!)} 2>&1`,
      'rc=$?',
      `zw_mark ${k} exit "$rc"`,
      `if [ "$rc" -ne 0 ]; then echo "zerowiz: pass ${k}/${n} ${step.name} failed (exit $rc)${k < n ? '; the next pass does not start' : ''}"; exit "$rc"; fi`,
    );
  });
  out.push('', `echo "zerowiz: all ${n} pass(es) done"`, '');
  return out.join('\n');
}

/** One node's commands for a per-node launch (export torchrun): rank, then one line per pass. */
export interface NodeCommands {
  rank: number;
  host: string;
  lines: string[];
}

/** The `accelerate launch` lines each node runs by hand (accelerate's `standard` launcher = torchrun). */
export function perNodeCommands(opts: {
  steps: LaunchStep[];
  accelerate: string;
  configFile: string;
  hosts: string[];
  gpusPerNode: number;
  port: number;
}): NodeCommands[] {
  const f: NodeFlags = {
    nodes: String(opts.hosts.length),
    numProcesses: String(opts.hosts.length * opts.gpusPerNode),
    ip: opts.hosts[0]!,
    port: String(opts.port),
  };
  return opts.hosts.map((host, rank) => ({
    rank,
    host,
    lines: opts.steps.map((s) =>
      joinWords([
        opts.accelerate,
        'launch',
        '--machine_rank',
        String(rank),
        ...passFlags(s, opts.configFile, f),
        ...s.args,
      ]),
    ),
  }));
}

/** A DeepSpeed hostfile: one `host slots=N` row per node. */
export function hostfileText(hosts: string[], slots: number): string {
  return hosts.map((h) => `${h} slots=${slots}\n`).join('');
}

/** One `zerowiz-step` line of the job's output, parsed. */
export type StepMark =
  | { step: number; kind: 'start'; at: number }
  | { step: number; kind: 'exit'; code: number; at: number };

/** Parses a `zerowiz-step K start MS` / `zerowiz-step K exit RC MS` line (K from 1); null for other lines. */
export function parseStepMark(line: string): StepMark | null {
  const m = /^zerowiz-step (\d+) (start|exit)(?: (-?\d+))? (\d+)\s*$/.exec(line);
  if (!m) return null;
  const step = Number(m[1]) - 1;
  if (m[2] === 'start') return m[3] === undefined ? { step, kind: 'start', at: Number(m[4]) } : null;
  return m[3] === undefined ? null : { step, kind: 'exit', code: Number(m[3]), at: Number(m[4]) };
}
