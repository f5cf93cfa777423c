/**
 * A run record as zerowiz writes it (`.zerowiz/runs/<id>/run.json`, src/records/record.ts), for tests of what
 * reads records (`runs`, `export weights`) without running a launch first.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withDefaults, type Answers } from '../../src/config/questions.js';
import { DEFAULT_FILES, type LaunchStep } from '../../src/config/setup.js';

/** Writes a finished run's record under `cwd`; returns its directory. */
export function writeRunRecord(
  cwd: string,
  opts: {
    id?: string;
    name?: string;
    answers?: Partial<Answers>;
    steps: LaunchStep[];
    accelerate?: string;
    startedAt?: Date;
    endedAt?: Date;
    /** Per step, fields of run.json's step that differ from a finished step of the whole run's time. */
    stepFields?: Record<string, unknown>[];
    extra?: Record<string, unknown>;
  },
): string {
  const id = opts.id ?? '20261201-101010-run';
  const dir = join(cwd, '.zerowiz', 'runs', id);
  mkdirSync(dir, { recursive: true });
  const started = opts.startedAt ?? new Date(Date.now() - 3_600_000);
  const ended = opts.endedAt ?? new Date(Date.now() + 60_000);
  const json = {
    version: 1,
    id,
    name: opts.name ?? 'run',
    source: opts.name ?? 'run',
    cwd,
    accelerate: { path: opts.accelerate ?? '/usr/bin/accelerate', display: 'accelerate' },
    startedAt: started.toISOString(),
    endedAt: ended.toISOString(),
    ended: 'succeeded',
    exitCode: 0,
    configFiles: [],
    steps: opts.steps.map((s, i) => ({
      name: s.name,
      argv: s.usesConfig ? ['launch', '--config_file', 'accelerate_config.yaml', ...s.args] : ['launch', ...s.args],
      usesConfig: s.usesConfig,
      command: '',
      log: `${String(i + 1).padStart(2, '0')}-${s.name}.log`,
      status: 'done',
      exitCode: 0,
      signal: null,
      startedAt: started.toISOString(),
      endedAt: ended.toISOString(),
      durationMs: ended.getTime() - started.getTime(),
      ...opts.stepFields?.[i],
    })),
    setup: {
      name: opts.name ?? 'run',
      answers: withDefaults(opts.answers ?? {}),
      files: { ...DEFAULT_FILES },
      steps: opts.steps,
    },
    ...opts.extra,
  };
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify(json, null, 2)}\n`);
  return dir;
}
