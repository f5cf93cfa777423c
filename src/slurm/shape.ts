/**
 * The Slurm shape decides the process count: a setup sent to N nodes with G GPUs each runs N x G
 * processes, whatever its num_machines/num_processes said. This module turns a setup into the one that
 * runs under Slurm (pure), says what it changed, and re-checks the memory fit for that shape through
 * the validator's public fit check.
 */
import { UsageError } from '../text/index.js';
import type { Setup } from '../config/index.js';
import { fitFindings, validate } from '../rules/index.js';
import type { Finding } from '../config/index.js';

/** How many nodes and GPUs per node a Slurm job asks for. */
export interface SlurmShape {
  nodes: number;
  gpusPerNode: number;
}

/** One thing zerowiz changed in the setup for Slurm, with why. */
export interface ShapeChange {
  /** The answer id (e.g. `num_processes`). */
  key: string;
  from: string;
  to: string;
  why: string;
}

/** The largest node count and GPUs per node zerowiz accepts (beyond any cluster there is). */
const MAX_NODES = 100_000;
const MAX_GPUS_PER_NODE = 1024;

/** The shape a setup asks for itself: its num_machines, and num_processes / num_machines GPUs each. */
export function shapeOfSetup(setup: Setup): SlurmShape {
  const nodes = Math.max(1, setup.answers.num_machines);
  return { nodes, gpusPerNode: Math.max(1, Math.floor(setup.answers.num_processes / nodes)) };
}

/** Parses `--nodes` / `--gpus-per-node` values (whole numbers >= 1); throws UsageError. */
export function parseShapeFlag(flag: '--nodes' | '--gpus-per-node', value: string): number {
  const max = flag === '--nodes' ? MAX_NODES : MAX_GPUS_PER_NODE;
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > max)
    throw new UsageError(
      `${flag} '${value}' is not a whole number from 1 to ${max}`,
      flag === '--nodes'
        ? 'give the number of nodes, e.g. --nodes 2'
        : 'give the GPUs of each node, e.g. --gpus-per-node 8',
    );
  return Number(value);
}

/** The setup as it runs under Slurm with this shape, and what changed. */
export interface SlurmSetup {
  setup: Setup;
  changes: ShapeChange[];
}

/**
 * The setup that runs as a Slurm job of this shape: num_machines = nodes, num_processes = nodes x GPUs per
 * node, and for several nodes accelerate's per-node torchrun launcher (`standard`: srun starts it on every
 * node, so no ssh, pdsh or hostfile). The rank, the main address and the port are given per node and per
 * job on the command line, so the YAML's rank is 0 and its main address is left to the command line.
 */
export function slurmSetup(setup: Setup, shape: SlurmShape, launcher: ShapeLauncher = 'srun'): SlurmSetup {
  const a = setup.answers;
  const changes: ShapeChange[] = [];
  const next = { ...a };
  const processes = shape.nodes * shape.gpusPerNode;
  const shapeWhy = `${shape.nodes} node(s) x ${shape.gpusPerNode} GPU(s) per node`;
  if (a.num_machines !== shape.nodes) {
    changes.push({ key: 'num_machines', from: String(a.num_machines), to: String(shape.nodes), why: shapeWhy });
    next.num_machines = shape.nodes;
  }
  if (a.num_processes !== processes) {
    changes.push({ key: 'num_processes', from: String(a.num_processes), to: String(processes), why: shapeWhy });
    next.num_processes = processes;
  }
  next.machine_rank = 0;
  if (shape.nodes > 1 && a.multinode_launcher !== 'standard') {
    const hostfile = a.num_machines > 1 && a.hostfile ? ` (the hostfile ${a.hostfile} is not used)` : '';
    changes.push({
      key: 'multinode_launcher',
      // A one-node setup never chose one: the YAML would get accelerate's default.
      from: a.num_machines > 1 ? a.multinode_launcher : `${a.multinode_launcher} (the default)`,
      to: 'standard',
      why:
        launcher === 'srun'
          ? `srun starts accelerate on every node, which runs torchrun there: no ssh, pdsh or hostfile${hostfile}`
          : `every node runs accelerate itself (per-node-commands.sh), which runs torchrun there: no ssh, pdsh or hostfile${hostfile}`,
    });
  }
  if (shape.nodes > 1) next.multinode_launcher = 'standard';
  if (shape.nodes > 1 && a.num_machines > 1) {
    // The setup's own multi-node answers that the job replaces (a one-node setup never used them).
    if (a.main_process_ip !== '')
      changes.push({
        key: 'main_process_ip',
        from: a.main_process_ip,
        to: launcher === 'srun' ? 'the first node of the job' : 'the first host',
        why:
          launcher === 'srun'
            ? 'given on the command line per job (`scontrol show hostnames $SLURM_JOB_NODELIST`)'
            : 'the main node is the first of --hosts',
      });
    if (a.main_process_port !== null)
      changes.push({
        key: 'main_process_port',
        from: String(a.main_process_port),
        to: launcher === 'srun' ? 'a free port on the first node' : 'the port of the per-node commands',
        why:
          launcher === 'srun'
            ? 'chosen per pass on that node, so two jobs sharing a node never collide'
            : "given on every node's command line",
      });
  }
  next.main_process_ip = '';
  next.main_process_port = null;
  if (a.ds_config_path !== '') {
    changes.push({
      key: 'ds_config_path',
      from: a.ds_config_path,
      to: "the run record's ds_config.json",
      why: 'the job reads the configs written for its shape',
    });
    next.ds_config_path = '';
  }
  return { setup: { ...setup, answers: next }, changes };
}

/** Who starts accelerate on every node of the shape: a Slurm job's srun, or the user with per-node commands. */
export type ShapeLauncher = 'srun' | 'torchrun';

/** A change as one line: `num_processes 1 -> 4 (2 node(s) x 2 GPU(s) per node)`. */
export function formatChange(c: ShapeChange): string {
  return `${c.key} ${c.from} -> ${c.to} (${c.why})`;
}

/** Rules the sbatch script satisfies itself (it passes the main address and a free port on the command line). */
const SATISFIED_BY_SCRIPT = new Set(['multinode-needs-ip', 'multinode-port']);

/** The findings for the setup as it runs under Slurm: its validation, with the fit re-checked for the shape. */
export function slurmFindings(slurm: Setup): { findings: Finding[]; fit: Finding[] } {
  const fit = fitFindings(slurm);
  const fitRules = new Set(fit.map((f) => f.rule));
  const findings = validate(slurm).filter((f) => !SATISFIED_BY_SCRIPT.has(f.rule) && !fitRules.has(f.rule));
  return { findings, fit };
}
