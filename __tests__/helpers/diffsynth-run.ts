/**
 * A DiffSynth-Studio checkout as a user has one (the seed preset's example script, its dataset, a parsers.py
 * that knows --enable_csv_log) and a real launch of the seed preset over it: the built bin, the stand-in
 * DiffSynth trainer (__tests__/fixtures/trainers/accelerate-diffsynth: a data pass, then training that writes
 * loss.csv) and the stand-in nvidia-smi on PATH. What the report and the notifications are tested on.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BIN } from './pty.js';
import { ROOT } from './paths.js';

const FIXTURES = join(ROOT, '__tests__', 'fixtures');
/** The stand-in DiffSynth trainer, as `--accelerate`. */
export const DIFFSYNTH = join(FIXTURES, 'trainers', 'accelerate-diffsynth');
/** The seed preset. */
export const SEED = 'qwen-image-lora-lowvram';
/** Where the seed's training pass writes (its --output_path), relative to the checkout. */
export const SEED_OUTPUT = join('models', 'train', 'Qwen-Image_lora');

/** A fresh checkout with the seed preset copied in as ./mine.yaml. */
export function diffsynthCheckout(prefix = 'zw-ds-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(d, 'examples/qwen_image/model_training'), { recursive: true });
  writeFileSync(join(d, 'examples/qwen_image/model_training/train.py'), '# stand-in\n');
  mkdirSync(join(d, 'data/example_image_dataset'), { recursive: true });
  writeFileSync(join(d, 'data/example_image_dataset/metadata.csv'), 'image,prompt\n');
  mkdirSync(join(d, 'diffsynth/diffusion'), { recursive: true });
  writeFileSync(
    join(d, 'diffsynth/diffusion/parsers.py'),
    'def add_logger_config(parser):\n    parser.add_argument("--enable_csv_log", default=False, action="store_true")\n',
  );
  copyFileSync(join(ROOT, 'presets', `${SEED}.yaml`), join(d, 'mine.yaml'));
  mkdirSync(join(d, 'home'));
  return d;
}

/** The environment of a run in `d`: its own HOME, the stand-in nvidia-smi, fast loops, no checks before passes. */
export function runEnv(d: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${join(FIXTURES, 'bin-nvidia')}:${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: join(d, 'home'),
    XDG_CONFIG_HOME: join(d, 'home', '.config'),
    XDG_CACHE_HOME: join(d, 'home', '.cache'),
    ZW_FAKE_NVIDIA_SMI: '8',
    ZEROWIZ_TELEMETRY_MS: '100',
    ZEROWIZ_SKIP_CHECKS: 'all',
    FAKE_TRAIN_STEPS: '40',
    FAKE_TRAIN_STEP_MS: '10',
    NO_COLOR: '1',
    ...more,
  };
}

/** The result of a command. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `zerowiz ARGS` in `cwd` with exactly `env` (no terminal). */
export function zerowiz(args: string[], cwd: string, env: Record<string, string>, timeoutMs = 120_000): Promise<Ran> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => {
        res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** `zerowiz launch ./mine.yaml --csv-log --no-tui --accelerate DIFFSYNTH ...more` in a checkout. */
export function launchSeed(d: string, env: Record<string, string>, more: string[] = []): Promise<Ran> {
  return zerowiz(['launch', './mine.yaml', '--csv-log', '--no-tui', '--accelerate', DIFFSYNTH, ...more], d, env);
}

/** The run directories of a checkout, oldest first. */
export function runDirs(d: string): string[] {
  const root = join(d, '.zerowiz', 'runs');
  try {
    return readdirSync(root)
      .filter((n) => !n.startsWith('.'))
      .sort()
      .map((n) => join(root, n));
  } catch {
    return [];
  }
}
