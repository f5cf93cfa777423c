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
import type { CheckId } from '../checks/index.js';
import { nodeCheckLines, nodeCheckPreamble } from '../checks/index.js';
import { UsageError } from '../text/index.js';
import { printable } from '../text/index.js';
import { shellArgs, shellJoin, shellWord } from '../text/index.js';
import { secretGuards } from '../text/index.js';
import type { LaunchStep } from '../config/index.js';
import { JOB_WATCH_ARG } from '../launch/index.js';
import { stepConfig } from '../config/index.js';
import { NO_DEEPSPEED_CONFIG_NAME } from '../config/index.js';
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
  /**
   * The checks before each pass on every node (`zerowiz check --node-report`, src/checks/slurm-lines.ts):
   * the node runtime, zerowiz's bin and the setup file as the nodes see them, and the checks left out. Absent:
   * the passes start unchecked (a script for plain sbatch, or every check skipped).
   */
  checks?: { node: string; bin: string; setupFile: string; skip: readonly CheckId[] };
  /**
   * The job's watch on its batch node (./job-watch.ts), run by zerowiz with the node runtime and bin the login
   * node used: the series the report draws, and the notifications to the targets in ZEROWIZ_NOTIFY (from the
   * submitting environment). Absent (a script for plain sbatch): neither.
   */
  watch?: { node: string; bin: string };
}

/**
 * The lines that start the job's watch in the background (it takes ZEROWIZ_NOTIFY with it; the passes do not),
 * and at the shell's exit (the end, a failed pass, SIGTERM at a time limit or a scancel) mark the end and give
 * the watch up to JOB_WATCH_WAIT_S to close its series and send the end.
 */
function watchLines(n: { node: string; bin: string }): string[] {
  return [
    '',
    "# This job's watch: zerowiz on this node reads the passes' logs for the series the report draws, and sends",
    '# the notifications to the targets in ZEROWIZ_NOTIFY (given by the submitting environment, never written',
    '# down); the passes do not see them. This node must reach each URL.',
    `${shellWord(n.node)} ${shellWord(n.bin)} ${JOB_WATCH_ARG} "$LOG_DIR" "$SLURM_JOB_ID" </dev/null >>"$LOG_DIR"/${JOB_WATCH_LOG} 2>&1 &`,
    'ZW_WATCH_PID=$!',
    'unset ZEROWIZ_NOTIFY',
    'zw_end() {',
    '  local rc=$?',
    '  echo "zerowiz-job end $rc $(date +%s%3N)"',
    `  (sleep ${JOB_WATCH_WAIT_S}; kill "$ZW_WATCH_PID" 2>/dev/null) & wait "$ZW_WATCH_PID" 2>/dev/null`,
    '}',
    'trap zw_end EXIT',
    "trap 'exit 143' TERM",
  ];
}

/** How long the batch shell waits at its end for the job's watch (Slurm's KillWait is 30 s by default). */
export const JOB_WATCH_WAIT_S = 40;
/** The job's watch's own messages, in the run's record. */
export const JOB_WATCH_LOG = 'job-watch.log';

/** The first port tried for the rendezvous: 20000 + job id mod 10000 keeps jobs on one node apart. */
export const MAIN_PORT_BASE = 20_000;
const MAIN_PORT_SPAN = 10_000;
/** The marker the batch shell prints around each pass. */
export const STEP_MARK = 'zerowiz-step';

/**
 * sbatch's long options, as Slurm 22.05.8's sbatch lists them (every `--X` prefix asked of the real binary:
 * getopt_long names the options a prefix could mean). getopt_long takes any unambiguous prefix of one, and
 * an exact name before a longer one (`--export` is not `--export-file`).
 */
const SBATCH_LONG_OPTIONS = new Set(
  (
    'account acctg-freq array batch bb bbf begin chdir cluster cluster-constraint clusters comment constraint ' +
    'container context contiguous core-spec cores-per-socket cpu-freq cpus-per-gpu cpus-per-task deadline ' +
    'delay-boot dependency distribution error exclude exclusive export export-file extra-node-info get-user-env ' +
    'gid gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-flags help hint hold ' +
    'ignore-pbs input job-name kill-on-invalid-dep licenses mail-type mail-user mcs-label mem mem-bind ' +
    'mem-per-cpu mem-per-gpu mincpus network nice no-kill no-requeue nodefile nodelist nodes ntasks ' +
    'ntasks-per-core ntasks-per-gpu ntasks-per-node ntasks-per-socket ntasks-per-tres open-mode output ' +
    'overcommit oversubscribe parsable partition power prefer priority profile propagate qos quiet reboot ' +
    'requeue reservation signal sockets-per-node spread-job switches tasks-per-node test-only thread-spec ' +
    'threads-per-core time time-min tmp uid usage use-min-nodes verbose version wait wait-all-nodes wckey wrap'
  ).split(' '),
);
/** sbatch's short options that take a value (the rest of a bundle is that value): 22.05's `--help`. */
const SBATCH_SHORT_WITH_VALUE = new Set('aAbBcCdDeFGiJLmMnNopqStwx'.split(''));

/** An option `--sbatch-arg` may not give, and why (zerowiz writes it, or it breaks how zerowiz follows the job). */
interface Refused {
  long: string;
  short?: string;
  /** zerowiz writes this option itself. */
  own?: boolean;
  why: string;
}
const REFUSED: Refused[] = [
  { long: 'output', short: 'o', own: true, why: "the job's output goes to the run record" },
  { long: 'error', short: 'e', own: true, why: "the job's output goes to the run record" },
  { long: 'chdir', short: 'D', own: true, why: 'the job runs where you launch it' },
  { long: 'job-name', short: 'J', own: true, why: 'zerowiz-<setup name>' },
  { long: 'parsable', own: true, why: 'to read the job id' },
  { long: 'nodes', short: 'N', own: true, why: "from the job's shape: use --nodes" },
  { long: 'ntasks-per-node', own: true, why: 'one task per node starts accelerate there' },
  { long: 'array', short: 'a', why: 'zerowiz follows one job, not an array of them' },
  { long: 'wrap', why: "it replaces zerowiz's job script" },
  { long: 'test-only', why: 'it submits nothing, and zerowiz would follow a job that does not exist' },
  { long: 'wait', short: 'W', why: 'sbatch would wait for the job to end before zerowiz can follow it' },
];

/** The option a `--NAME` spelling means to sbatch (exact, or the only option it abbreviates), or the refused one it could mean. */
function refusedLong(name: string): Refused | null {
  if (SBATCH_LONG_OPTIONS.has(name)) return REFUSED.find((r) => r.long === name) ?? null;
  // A prefix: sbatch takes it for the one option it abbreviates (or refuses it as ambiguous).
  return REFUSED.find((r) => r.long.startsWith(name)) ?? null;
}

/** The refused option a short-option word (`-D/tmp`, `-vo/x`, `-Jx`) sets, walking a bundle as getopt does. */
function refusedShort(word: string): Refused | null {
  for (const c of word.slice(1)) {
    const r = REFUSED.find((x) => x.short === c);
    if (r) return r;
    if (SBATCH_SHORT_WITH_VALUE.has(c)) return null;
  }
  return null;
}

/** Throws UsageError (one line and its hint) for the first --sbatch-arg that checkSbatchArg refuses. */
export function refuseBadSbatchArgs(extra: readonly string[]): void {
  for (const a of extra) {
    const why = checkSbatchArg(a);
    if (why)
      throw new UsageError(
        `--sbatch-arg: ${why}`,
        'pass sbatch options as --sbatch-arg=--exclusive, --sbatch-arg=--mem=0, ...',
      );
  }
}

/**
 * Checks one `--sbatch-arg` value; returns why it is refused, or null. Every spelling of an option zerowiz
 * sets or that breaks the job it follows is refused: `--output`, its getopt_long abbreviations (`--out`,
 * `--outp`), the short form with or without a glued value and in a bundle (`-o/x`, `-vo/x`).
 */
export function checkSbatchArg(arg: string): string | null {
  if (!arg.startsWith('-')) return `'${printable(arg)}' is not an sbatch option (they start with -)`;
  if (/[\n\r]/.test(arg)) return 'an sbatch option cannot span lines';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(arg)) return `'${printable(arg)}' holds a control character`;
  if (arg === '-' || arg === '--') return `'${arg}' is not an sbatch option`;
  const name = arg.startsWith('--') ? arg.slice(2).split('=')[0]! : '';
  const r = arg.startsWith('--') ? refusedLong(name) : refusedShort(arg);
  if (!r) return null;
  const given = arg.startsWith('--') ? `--${name}` : arg;
  const spelled = given === `--${r.long}` ? '' : ` (sbatch reads ${given} as --${r.long})`;
  return r.own ? `--${r.long} is set by zerowiz${spelled} (${r.why})` : `--${r.long} is refused${spelled}: ${r.why}`;
}

/**
 * What a (not refused) `--sbatch-arg` changes that the user should know, or null: a job environment
 * without the user's (`--export` other than ALL), another output mode, GPUs other than the shape's.
 */
export function sbatchArgWarning(arg: string): string | null {
  const [name = '', value] = arg.startsWith('--')
    ? [arg.slice(2).split('=')[0], arg.split('=').slice(1).join('=')]
    : [];
  const means = (long: string) =>
    name === long || (!SBATCH_LONG_OPTIONS.has(name) && name.length > 0 && long.startsWith(name));
  if (means('export') && !/^ALL(,|$)/.test(value ?? ''))
    return `--export=${printable(value ?? '')}: the job starts without your environment (PATH, the Python environment, variables a step reads, a secret passed by name); accelerate may not be found`;
  if (means('export-file'))
    return "--export-file: the job's environment comes from that file instead of yours; accelerate may not be found";
  if (means('open-mode'))
    return `--open-mode=${printable(value ?? '')}: changes how the job's output file (job-<id>.out in the run record) is opened; zerowiz reads it from its start`;
  if (means('gres') || means('gpus') || means('gpus-per-node') || arg.startsWith('-G'))
    return `${printable(arg.split('=')[0]!)}: asks Slurm for other GPUs than the job's shape (--gpus-per-node), with which zerowiz counts the processes`;
  return null;
}

/** Characters of a path that sbatch's `#SBATCH` reader or slurmd's file name patterns cannot carry. */
function pathProblem(path: string, option: '--chdir' | '--output'): string | null {
  if (/[\n\r]/.test(path)) return `${option} ${printable(path)}: sbatch cannot carry a newline in an #SBATCH line`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path))
    return `${option} ${printable(path)}: holds a control character, which Slurm cannot show or carry safely`;
  if (option === '--output' && path.includes('\\'))
    return `${option} ${printable(path)}: slurmd drops a backslash from an output file name (it turns off its %-patterns)`;
  return null;
}

/**
 * Throws UsageError when the directory a job runs in or the folder of its output cannot go into an `#SBATCH`
 * line as it is (a newline or another control character; a backslash in the output's folder).
 */
export function checkJobPaths(cwd: string, outputDir: string): void {
  requireSlurmPath(cwd, '--chdir');
  requireSlurmPath(`${outputDir}/job-%j.out`, '--output');
}

/** Throws the UsageError for a path Slurm cannot take (see pathProblem). */
function requireSlurmPath(path: string, option: '--chdir' | '--output'): void {
  const why = pathProblem(path, option);
  if (why)
    throw new UsageError(
      why,
      option === '--chdir'
        ? 'rename the directory (or launch from another one): the job runs in it'
        : 'write the job output to a folder whose name has no backslash or control character',
    );
}

/**
 * A word of an `#SBATCH` line as sbatch reads it (src/sbatch/opt.c, checked against the real sbatch):
 * single quotes where needed, with each backslash doubled (sbatch takes `\` as an escape even inside
 * quotes) and a quote as `'\''`. A newline cannot be carried (callers refuse it first).
 */
export function sbatchWord(word: string): string {
  if (/^[A-Za-z0-9_\-./=:,+@%]+$/.test(word)) return word;
  return `'${word.replace(/\\/g, '\\\\').replace(/'/g, `'\\''`)}'`;
}

/** An output file name pattern for slurmd: `dir`'s `%` doubled (slurmd reads %x, %j, ... anywhere in it). */
function outputPattern(dir: string, file: string): string {
  return `${dir.replace(/%/g, '%%')}/${file}`;
}

/** The `#SBATCH` lines of a job (shape, partition, time, account, QOS, extra options). */
export function sbatchDirectives(
  spec: Pick<ScriptSpec, 'jobName' | 'shape' | 'options' | 'cwd'>,
  outputDir: string,
  outputFile: string,
): string[] {
  const o = spec.options;
  requireSlurmPath(spec.cwd, '--chdir');
  requireSlurmPath(`${outputDir}/${outputFile}`, '--output');
  refuseBadSbatchArgs(o.extra);
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
    `--output=${outputPattern(outputDir, outputFile)}`,
    ...o.extra,
  ];
  return d.map((x) => `#SBATCH ${sbatchWord(x)}`);
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
    ...sbatchDirectives(spec, spec.logDir, spec.jobOutput),
    '#',
    `# ${spec.jobName}: ${n} pass(es) as job steps, in order; a pass starts only if the previous one succeeded.`,
    // A comment ends at a newline: what the notes quote (a preset's path) is shown escaped.
    ...spec.notes.map((l) => `# ${printable(l)}`),
    '',
    'set -uo pipefail',
    // A secret of a step is passed by name (../redact.ts): the job stops at once, saying which, without it.
    ...secretGuards(spec.steps.map((s) => s.args)),
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
    ...(spec.checks
      ? [
          '',
          '# zerowiz and the setup, for the checks before each pass',
          ...nodeCheckPreamble({ ...spec.checks, accelerate: spec.accelerate }),
        ]
      : []),
    ...(spec.watch ? watchLines(spec.watch) : []),
  ];
  const flags: NodeFlags = {
    nodes: { sh: '"$SLURM_NNODES"' },
    numProcesses: { sh: '"$NUM_PROCESSES"' },
    ip: { sh: '"$MAIN_IP"' },
    port: { sh: '"$MAIN_PORT"' },
  };
  spec.steps.forEach((step, i) => {
    const k = i + 1;
    const log = `"$LOG_DIR"/${spec.perJobLogs ? '"$SLURM_JOB_ID"-' : ''}${shellWord(spec.stepLogs[i]!)}`;
    const checks = spec.checks;
    out.push(
      '',
      `# pass ${k}/${n}: ${printable(step.name)}${passConfigNote(step)}`,
      'MAIN_PORT=$(zw_free_port)',
      `zw_mark ${k} start`,
      ...(checks ? nodeCheckLines({ k, total: n, name: step.name, logPath: log, skip: checks.skip }) : []),
      // $SLURM_NODEID is inside single quotes: each task (one per node) expands its own.
      `srun -u --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c 'exec "$0" launch --machine_rank "$SLURM_NODEID" "$@"' "$ACCELERATE" \\`,
      `  ${joinWords(passFlags(step, spec.configFile, flags))} \\`,
      `  ${shellJoin(step.args)} \\`,
      // After the checks the pass appends to the log they began.
      `  ${checks ? '>>' : '>'} ${log} 2>&1`,
      'rc=$?',
      `zw_mark ${k} exit "$rc"`,
      // The step's name is a word of its own: nothing in it is expanded by the batch shell.
      `if [ "$rc" -ne 0 ]; then echo ${shellWord(`zerowiz: pass ${k}/${n} ${printable(step.name)} failed (exit`)} "$rc)${k < n ? '; the next pass does not start' : ''}"; exit "$rc"; fi`,
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
        ...shellArgs(s.args).map((sh) => ({ sh })),
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
