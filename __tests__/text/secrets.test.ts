/**
 * Secrets on the command line (`--hf_token hf_...`, `--wandb_key=...`, `WANDB_API_KEY=...`): the step still
 * gets them, but nothing zerowiz prints or records carries the value. A printed command names the secret
 * by its environment variable (`--hf_token "$HF_TOKEN"`), commands.sh and the job scripts take it from
 * there (and stop with one line when it is not set), sbatch hands it to the job in its environment, and a
 * record holds `<redacted>`; `launch --last` takes the value back from the environment or refuses.
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/pty.js';
import { loadPreset } from '../../src/setups/presets.js';
import type { Setup } from '../../src/config/setup.js';
import { UsageError } from '../../src/text/errors.js';
import { SECRET_MARK, isSecretName, redactArgv, redactRunJson, restoreSecrets } from '../../src/text/redact.js';
import { shellJoin } from '../../src/text/quote.js';
import { planSlurmLaunch, submitSlurm } from '../../src/slurm/launch.js';
import { perNodeCommands } from '../../src/slurm/script.js';
import { presetSource } from '../../src/config/source.js';
import { removeWorkDirs } from '../helpers/proc.js';

const FAKE = join(ROOT, '__tests__', 'fixtures', 'accelerate');
const TOKEN = 'hf_SeCrEtVaLuE123';
const KEY = 'wandbKEYvalue987';
const PASS = 'pa55-w0rd';
const dirs: string[] = [];
afterEach(async () => {
  await removeWorkDirs(dirs.splice(0));
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'zw-secrets-'));
  dirs.push(d);
  return d;
}

const ARGS = [
  'train.py',
  '--hf_token',
  TOKEN,
  `--wandb_key=${KEY}`,
  `DB_PASSWORD=${PASS}`,
  '--data_file_keys',
  'image,prompt',
  '--max_new_tokens',
  '64',
];

/** Whether any of the secret values occurs in `text`. */
const leaks = (text: string) => [TOKEN, KEY, PASS].filter((s) => text.includes(s));

describe('what names a secret', () => {
  it('arguments and KEY=value names that say token, key, secret or password; not tokenizer or data keys', () => {
    for (const n of [
      'hf_token',
      'token',
      'wandb_key',
      'api-key',
      'WANDB_API_KEY',
      'db_password',
      'client_secret',
      'openaiApiKey',
      'hub.token',
      'passwd',
      'access_key',
      'auth_token',
      'private_key',
    ])
      expect(isSecretName(n), n).toBe(true);
    for (const n of [
      'data_file_keys',
      'max_new_tokens',
      'pad_token',
      'eos_token',
      'tokenizer_path',
      'hf_token_path',
      'caption_key',
      'keys',
      'key_frames',
      'learning_rate',
      'use_auth_token',
      'pwd',
      'token_file',
    ])
      expect(isSecretName(n), n).toBe(false);
  });

  it('redacts the values in an argv, keeping everything else as it was', () => {
    expect(redactArgv(ARGS)).toEqual([
      'train.py',
      '--hf_token',
      SECRET_MARK,
      `--wandb_key=${SECRET_MARK}`,
      `DB_PASSWORD=${SECRET_MARK}`,
      '--data_file_keys',
      'image,prompt',
      '--max_new_tokens',
      '64',
    ]);
    // A flag with no value after it, or a yes/no value, is no secret to hide.
    expect(redactArgv(['--push_to_hub', '--hub_token', '--x'])).toEqual(['--push_to_hub', '--hub_token', '--x']);
  });
});

describe('a printed command names the secret by its variable, and means the same in a shell that has it', () => {
  it('shellJoin: no value; bash with the variables set gives back the exact argv', () => {
    const line = shellJoin(['accelerate', 'launch', ...ARGS]);
    expect(leaks(line)).toEqual([]);
    expect(line).toContain('--hf_token "$HF_TOKEN"');
    expect(line).toContain('"--wandb_key=$WANDB_KEY"');
    expect(line).toContain('"DB_PASSWORD=$DB_PASSWORD"');
    const r = spawnSync('bash', ['-c', `printf '%s\\n' ${line.split(' ').slice(2).join(' ')}`], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HF_TOKEN: TOKEN, WANDB_KEY: KEY, DB_PASSWORD: PASS },
    });
    expect(r.stdout.trimEnd().split('\n')).toEqual(ARGS);
  });

  it('per-node commands (export torchrun) too', () => {
    const nodes = perNodeCommands({
      steps: [{ name: 'train', usesConfig: true, args: ARGS }],
      accelerate: 'accelerate',
      configFile: '/c.yaml',
      hosts: ['a', 'b'],
      gpusPerNode: 1,
      port: 29500,
    });
    expect(leaks(JSON.stringify(nodes))).toEqual([]);
    expect(nodes[0]!.lines[0]).toContain('--hf_token "$HF_TOKEN"');
  });
});

function secretPreset(d: string): string {
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  const p = join(d, 'secret.yaml');
  writeFileSync(
    p,
    [
      'name: secret',
      'answers:',
      '  num_processes: 1',
      '  mode: 2',
      '  mixed_precision: bf16',
      'steps:',
      '  - name: train',
      '    uses_config: true',
      `    args: ${JSON.stringify(ARGS)}`,
      '',
    ].join('\n'),
  );
  return p;
}

function zerowiz(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1', FAKE_ACCELERATE_STEP_MS: '0', ...env } },
      (err, stdout, stderr) => {
        res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('a local launch', () => {
  it('the step gets the values; the output, the dry run and commands.sh do not; commands.sh reruns it from the environment', async () => {
    const d = tmp();
    const preset = secretPreset(d);
    const log = join(d, 'argv.jsonl');
    const dry = await zerowiz(['launch', preset, '--dry-run', '--accelerate', FAKE], d);
    expect(dry.code, dry.stderr).toBe(0);
    expect(leaks(dry.stdout + dry.stderr)).toEqual([]);
    const r = await zerowiz(['launch', preset, '--no-tui', '--accelerate', FAKE], d, { FAKE_ACCELERATE_LOG: log });
    expect(r.code, r.stderr).toBe(0);
    expect(leaks(r.stdout + r.stderr)).toEqual([]);
    const got = JSON.parse(readFileSync(log, 'utf8').trim()) as { argv: string[] };
    expect(got.argv.slice(-ARGS.length)).toEqual(ARGS);
    const [id] = readdirSync(join(d, '.zerowiz', 'runs'));
    const script = join(d, '.zerowiz', 'runs', id!, 'commands.sh');
    const text = readFileSync(script, 'utf8');
    expect(leaks(text)).toEqual([]);
    // Without the variables: one line naming what to set, and nothing runs.
    rmSync(log);
    const bare = spawnSync('sh', [script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, FAKE_ACCELERATE_LOG: log },
    });
    expect(bare.status).not.toBe(0);
    expect(bare.stderr).toMatch(/HF_TOKEN.*zerowiz records no secret/);
    expect(existsSync(log)).toBe(false);
    const again = spawnSync('sh', [script], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        FAKE_ACCELERATE_LOG: log,
        FAKE_ACCELERATE_STEP_MS: '0',
        HF_TOKEN: TOKEN,
        WANDB_KEY: KEY,
        DB_PASSWORD: PASS,
      },
    });
    expect(again.status, again.stderr).toBe(0);
    expect((JSON.parse(readFileSync(log, 'utf8').trim()) as { argv: string[] }).argv.slice(-ARGS.length)).toEqual(ARGS);
  }, 60_000);
});

describe('a record and launch --last', () => {
  it('redactRunJson leaves no value in the steps or the setup; restoreSecrets takes them from the environment or refuses', async () => {
    const setup: Setup = { ...(await loadPreset('zero2')), steps: [{ name: 'train', usesConfig: true, args: ARGS }] };
    const json = {
      id: 'r1',
      source: 'secret.yaml',
      steps: [{ name: 'train', argv: ['launch', ...ARGS], command: 'x' }],
      setup,
    };
    const red = redactRunJson(json as never) as unknown as typeof json;
    expect(leaks(JSON.stringify(red))).toEqual([]);
    expect(leaks(JSON.stringify(setup))).toEqual([TOKEN, KEY, PASS]); // the original is left alone
    const back = restoreSecrets(red.setup, { HF_TOKEN: TOKEN, WANDB_KEY: KEY, DB_PASSWORD: PASS }, 'r1 (secret.yaml)');
    expect(back.steps[0]!.args).toEqual(ARGS);
    let err: unknown = null;
    try {
      restoreSecrets(red.setup, { HF_TOKEN: TOKEN }, 'r1 (secret.yaml)');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(/--wandb_key.*train.*not record/);
    expect((err as UsageError).hint).toMatch(/export WANDB_KEY=/);
  });
});

describe('a Slurm job', () => {
  it('the script passes each secret by name, sbatch gets it in the job environment, the record holds none', async () => {
    const d = tmp();
    writeFileSync(join(d, 'train.py'), '');
    const bin = join(d, 'bin');
    mkdirSync(bin);
    // A stand-in sbatch that keeps the environment it was given and the script, and answers a job id.
    writeFileSync(join(bin, 'sbatch'), `#!/bin/sh\nenv > '${join(d, 'sbatch.env')}'\necho 4242\n`);
    chmodSync(join(bin, 'sbatch'), 0o755);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    delete env.HF_TOKEN;
    const setup: Setup = { ...(await loadPreset('zero2')), steps: [{ name: 'train', usesConfig: true, args: ARGS }] };
    const plan = planSlurmLaunch(
      setup,
      { options: { extra: [] } },
      { source: presetSource('test'), accelerate: FAKE, cwd: d, env },
    );
    const sub = await submitSlurm(plan, { env, cwd: d });
    const files = readdirSync(sub.record.dir).map((f) => readFileSync(join(sub.record.dir, f), 'utf8'));
    expect(leaks(files.join('\n'))).toEqual([]);
    const script = readFileSync(join(sub.record.dir, 'job.sbatch'), 'utf8');
    expect(script).toContain('--hf_token "$HF_TOKEN"');
    expect(readFileSync(join(d, 'sbatch.env'), 'utf8')).toContain(`HF_TOKEN=${TOKEN}\n`);
    expect(sub.record.json.steps[0]!.argv).toContain(SECRET_MARK);
  });
});

describe('a preset', () => {
  it('whose steps pass a secret is saved 0600 whatever the umask (one without keeps 0644 less the umask)', async () => {
    const { savePresetFile } = await import('../../src/setups/presets.js');
    const { lstatSync } = await import('node:fs');
    const d = tmp();
    const env = { HOME: d, XDG_CONFIG_HOME: join(d, 'cfg') };
    const base = await loadPreset('zero2');
    const old = process.umask(0);
    try {
      const secret = await savePresetFile(
        's',
        { ...base, steps: [{ name: 'train', usesConfig: true, args: ARGS }] },
        '',
        undefined,
        env,
      );
      const plain = await savePresetFile('p', base, '', undefined, env);
      expect(lstatSync(secret.path).mode & 0o777).toBe(0o600);
      expect(lstatSync(plain.path).mode & 0o777).toBe(0o644);
    } finally {
      process.umask(old);
    }
  });
});
