/** The work of `zerowiz export slurm|torchrun|hostfile`: shaped configs plus the launcher's artifact, nothing run. */
import { mkdir } from 'node:fs/promises';
import { secretGuards } from '../text/index.js';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError, shellJoin } from '../text/index.js';
import { shellWord } from '../text/index.js';
import { presetSource } from '../config/index.js';
import { loadPreset } from '../setups/index.js';
import { pinSteps } from '../config/index.js';
import type { Setup } from '../config/index.js';
import { checkOptions, jobName, planSlurmLaunch } from '../slurm/index.js';
import { stepLogName } from '../records/index.js';
import { hostfileText, perNodeCommands, sbatchOptionsOf, sbatchScript } from '../slurm/index.js';
import { formatChange, parseShapeFlag, shapeOfSetup } from '../slurm/index.js';
import { slurm } from '../slurm/index.js';
import { pathFlag } from '../fs/index.js';
import { formatWrite, writeFilesTogether, type FileToWrite } from '../fs/index.js';
import { inReportOrder, launchConfigFiles, setupInDir } from '../config/index.js';
import { missingScripts } from '../config/index.js';
import * as output from './output.js';

/** Raw flag values as commander hands them over. */
export interface ExportFlags {
  out?: string;
  nodes?: string;
  gpusPerNode?: string;
  hosts?: string;
  mainProcessPort?: string;
  accelerate?: string;
  partition?: string;
  time?: string;
  account?: string;
  qos?: string;
  sbatchArg?: string[];
  /** --pin-step NAME: run these steps with zerowiz's config without DeepSpeed. */
  pinStep?: string[];
  /** export weights: the checkpoint's step, the LoRA key layout, the Python with DeepSpeed. */
  step?: string;
  layout?: string;
  python?: string;
}

/** The port the per-node commands use when the setup names none (accelerate's default). */
export const DEFAULT_MAIN_PORT = 29_500;

/** Host names from --hosts, or from the Slurm allocation this runs in; null when neither. */
async function hostNames(flags: ExportFlags): Promise<string[] | null> {
  if (flags.hosts !== undefined) {
    const hosts = flags.hosts
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
    const bad = hosts.find((h) => !/^[A-Za-z0-9._:-]+$/.test(h));
    if (hosts.length === 0 || bad !== undefined)
      throw new UsageError(
        `--hosts '${flags.hosts}' is not a list of host names${bad ? ` ('${bad}')` : ''}`,
        'give them comma-separated, the main node first, e.g. --hosts node1,node2',
      );
    return hosts;
  }
  const list = process.env.SLURM_JOB_NODELIST;
  if (!list) return null;
  const r = await slurm('scontrol', ['show', 'hostnames', list], { env: process.env, cwd: process.cwd() });
  if (r.code !== 0) return null;
  const hosts = r.stdout.split('\n').filter((h) => h.trim() !== '');
  return hosts.length > 0 ? hosts : null;
}

/** `zerowiz export KIND NAME|FILE --out DIR`; resolves with the exit code. */
export async function exportCommand(
  kind: 'slurm' | 'torchrun' | 'hostfile',
  ref: string,
  flags: ExportFlags,
): Promise<number> {
  if (flags.out === undefined || flags.out === '')
    throw new UsageError('export needs --out DIR', `e.g. zerowiz export ${kind} ${ref} --out ./${kind}`);
  const out = pathFlag('--out', flags.out);
  const setup: Setup = pinSteps(await loadPreset(ref), flags.pinStep ?? []);
  const hosts = kind === 'slurm' ? null : await hostNames(flags);
  if (kind !== 'slurm' && hosts === null)
    throw new UsageError(
      `export ${kind} needs the node host names`,
      'give --hosts node1,node2 (the main node first), or run it inside a Slurm allocation (salloc)',
    );
  const own = shapeOfSetup(setup);
  let nodes = flags.nodes !== undefined ? parseShapeFlag('--nodes', flags.nodes) : (hosts?.length ?? own.nodes);
  if (hosts && flags.nodes !== undefined && nodes !== hosts.length)
    throw new UsageError(
      `--nodes ${nodes} but ${hosts.length} host name(s)`,
      'give one host name per node, or leave --nodes out',
    );
  if (hosts) nodes = hosts.length;
  const gpusPerNode =
    flags.gpusPerNode !== undefined ? parseShapeFlag('--gpus-per-node', flags.gpusPerNode) : own.gpusPerNode;
  const shape = { nodes, gpusPerNode };
  const options = sbatchOptionsOf(flags);
  checkOptions(options);
  if (kind === 'hostfile') {
    // A hostfile is for DeepSpeed's own launchers and names no config: nothing of the setup is shaped here.
    const results = await writeFilesTogether([
      { path: join(out, 'hostfile'), text: hostfileText(hosts!, gpusPerNode) },
    ]);
    output.lines(results.map((r) => formatWrite(r)));
    return 0;
  }
  const cwd = process.cwd();
  // Checked and shaped as `zerowiz launch --slurm` plans its job (the launch entry's rules for the steps
  // included): an exported job runs what a launch of the same preset runs.
  const plan = planSlurmLaunch(
    setup,
    { nodes, gpusPerNode, options },
    {
      source: presetSource(ref),
      accelerate: flags.accelerate,
      dryRun: true,
      cwd,
      launcher: kind === 'slurm' ? 'srun' : 'torchrun',
      // A step to pin is pinned by this export's own flag.
      again: (pin) =>
        shellJoin([
          'zerowiz',
          'export',
          kind,
          ref,
          '--out',
          flags.out!,
          ...[...(flags.pinStep ?? []), pin].flatMap((p) => ['--pin-step', p]),
        ]),
    },
  );
  for (const f of [...plan.findings, ...plan.fit]) output.finding(f);
  for (const c of plan.changes) output.say(`${kind}: ${formatChange(c)}`);
  for (const w of plan.storage) output.warn(w);
  const missing = missingScripts(setup, cwd);
  for (const m of missing)
    output.note(`step '${m.step}': training script ${m.path} not found in ${cwd} (the commands would stop there)`);

  // The torchrun YAML names the main node and port itself: the first host, the port every node is given.
  const port =
    flags.mainProcessPort !== undefined
      ? portOf(flags.mainProcessPort)
      : (setup.answers.main_process_port ?? DEFAULT_MAIN_PORT);
  const shapedSetup: Setup =
    kind === 'torchrun'
      ? { ...plan.slurm, answers: { ...plan.slurm.answers, main_process_ip: hosts![0]!, main_process_port: port } }
      : plan.slurm;
  const placed = setupInDir(shapedSetup, out);
  const accelerate =
    flags.accelerate === undefined
      ? 'accelerate'
      : isAbsolute(flags.accelerate) || !flags.accelerate.includes('/')
        ? flags.accelerate
        : resolve(flags.accelerate);
  let artifact: FileToWrite;
  if (kind === 'slurm') {
    const script = sbatchScript({
      jobName: jobName(setup),
      shape,
      options,
      cwd,
      accelerate,
      configFile: placed.files.accelerateConfig,
      steps: placed.steps,
      logDir: join(out, 'logs'),
      jobOutput: 'slurm-%j.out',
      stepLogs: placed.steps.map((s, i) => stepLogName(i, s.name)),
      perJobLogs: true,
      notes: [
        `Written by \`zerowiz export slurm ${ref}\`; submit with \`sbatch ${join(out, `${setup.name}.sbatch`)}\`.`,
        ...plan.changes.map((c) => `zerowiz changed: ${formatChange(c)}`),
      ],
    });
    // The logs' folder only once the script is known to be writable (sbatchScript refuses bad names first).
    await mkdir(join(out, 'logs'), { recursive: true });
    artifact = { path: join(out, `${setup.name}.sbatch`), text: script };
  } else {
    const nodesCmds = perNodeCommands({
      steps: placed.steps,
      accelerate,
      configFile: placed.files.accelerateConfig,
      hosts: hosts!,
      gpusPerNode,
      port,
    });
    const n = placed.steps.length;
    const lines = [
      '#!/bin/sh',
      `# ${setup.name} on ${nodes} node(s) x ${gpusPerNode} GPU(s): accelerate's per-node launcher (torchrun on each node).`,
      `# Run this on every node at the same time:  NODE_RANK=<rank> sh ${join(out, 'per-node-commands.sh')}`,
      ...nodesCmds.map((c) => `#   rank ${c.rank}: ${c.host}${c.rank === 0 ? ` (main process, port ${port})` : ''}`),
      '# A pass starts only when the previous one succeeded (set -e).',
      ...plan.changes.map((c) => `# zerowiz changed: ${formatChange(c)}`),
      'set -e',
      // A step's secret is passed by its variable: the script stops first when one is not set.
      ...secretGuards(placed.steps.map((st) => st.args)),
      `cd ${shellWord(cwd)}`,
      `case "\${NODE_RANK:?set NODE_RANK to this node's rank, 0 to ${nodes - 1}}" in`,
      ...nodesCmds.flatMap((c) => [
        `${c.rank})`,
        ...c.lines.flatMap((l, i) => [`  # pass ${i + 1}/${n}: ${placed.steps[i]!.name}`, `  ${l}`]),
        '  ;;',
      ]),
      `*) echo "NODE_RANK must be 0 to ${nodes - 1}" >&2; exit 2 ;;`,
      'esac',
      '',
    ];
    artifact = { path: join(out, 'per-node-commands.sh'), text: lines.join('\n') };
  }
  // Every config file the commands name (the pinned one without DeepSpeed too, for the job's shape) and the
  // artifact that names them are one transaction: all written, or none.
  const configs = launchConfigFiles(placed, cwd);
  const results = await writeFilesTogether([...configs, artifact]);
  const shown = [
    ...inReportOrder(results.slice(0, configs.length).map((r, i) => ({ ...r, role: configs[i]!.role }))),
    results.at(-1)!,
  ];
  output.lines(shown.map((r) => formatWrite(r)));
  return 0;
}

function portOf(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
    throw new UsageError(`--main-process-port '${v}' is not a port`, 'give a number from 1 to 65535, e.g. 29500');
  return Number(v);
}
