/**
 * The seal between the tests and the machine (helpers/seal.ts), and the hostile host every run starts on
 * (helpers/hostile-host.ts): a test file sees none of the host's nvidia-smi, Slurm clients, accelerate,
 * default config, presets or variables, however the machine is set up.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accelerateDefaultConfig, userPresetsDir } from '../../src/fs/index.js';
import { runCli } from '../helpers/cli.js';
import { HOST_ONLY_PROGRAMS } from '../helpers/hostile-host.js';
import { ROOT } from '../helpers/paths.js';
import { buildSeal, SEALED_VARIABLE_RES, sealedDirs } from '../helpers/seal.js';

const hostOnly = new Set<string>(HOST_ONLY_PROGRAMS);

function programsOnPath(path: string): string[] {
  return path.split(delimiter).flatMap((d) => {
    try {
      return readdirSync(d).filter((n) => hostOnly.has(n));
    } catch {
      return [];
    }
  });
}

describe('each test file is sealed from the machine', () => {
  it('its PATH holds none of the host-only programs, whatever the host PATH holds', () => {
    expect(programsOnPath(process.env.PATH ?? '')).toEqual([]);
    const which = spawnSync('sh', ['-c', 'command -v nvidia-smi sbatch accelerate; true'], { encoding: 'utf8' });
    expect(which.stdout).toBe('');
  });

  it('its HOME is its own: no accelerate default config, no user presets; HF_HOME and the XDG folders point inside', () => {
    const home = process.env.HOME ?? '';
    expect(home.startsWith(tmpdir())).toBe(true);
    expect(existsSync(accelerateDefaultConfig(process.env))).toBe(false);
    expect(existsSync(userPresetsDir(process.env))).toBe(false);
    expect(process.env.HF_HOME).toBeUndefined();
    for (const k of ['XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME'])
      expect(relative(home, process.env[k] ?? '/').startsWith('..')).toBe(false);
  });

  it("no variable of a GPU box, a Slurm allocation or the user's zerowiz settings reaches it", () => {
    const leaked = Object.keys(process.env).filter(
      (k) => k !== 'ZEROWIZ_SKIP_CHECKS' && !k.startsWith('XDG_') && SEALED_VARIABLE_RES.some((re) => re.test(k)),
    );
    expect(leaked).toEqual([]);
    expect(process.env.ZEROWIZ_SKIP_CHECKS).toBe('all');
  });

  it("the built bin run from a test finds no GPUs and no default config: its output is the bare machine's", () => {
    const r = runCli(['estimate', '--model', 'qwen-image', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/GPUs? found here/);
  });

  it('the run itself is on the hostile host (unless ZW_TEST_HOST=as-is): its site bin is sealed away whole', () => {
    const shadows = JSON.parse(process.env.ZW_TEST_SHADOWS ?? '{}') as Record<string, string>;
    const site = Object.keys(shadows).filter((d) => d.includes('zw-hostile-host-'));
    if (process.env.ZW_TEST_HOST === 'as-is') expect(site).toEqual([]);
    else expect(site.map((d) => shadows[d])).toEqual(['']);
  });
});

describe('the seal', () => {
  it('shadows a folder that holds a host-only program: the others still run (by wrapper), that one is gone', () => {
    const root = mkdtempSync(join(tmpdir(), 'zw-seal-'));
    const usrBin = join(root, 'usr-bin');
    const site = join(root, 'site');
    for (const d of [usrBin, site]) mkdirSync(d);
    const script = (dir: string, name: string, body: string) => {
      writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(dir, name), 0o755);
    };
    script(usrBin, 'nvidia-smi', 'echo 0, NVIDIA H100 80GB HBM3, 81559');
    script(usrBin, 'python3', 'echo "python from $0 with $*"');
    script(site, 'sbatch', 'echo Submitted batch job 1');
    const env: NodeJS.ProcessEnv = {};
    const shadowRoot = buildSeal([site, usrBin, '/bin'].join(delimiter), env);
    const shadows = JSON.parse(env.ZW_TEST_SHADOWS!) as Record<string, string>;
    const sealed = env.ZW_TEST_SEALED_PATH!;
    expect(shadows[site]).toBe('');
    expect(shadows[usrBin]!.startsWith(shadowRoot)).toBe(true);
    // /bin may be /usr/bin (a merged /usr): then it is shadowed too.
    expect(sealed.split(delimiter)).toEqual([shadows[usrBin], shadows['/bin'] ?? '/bin']);
    expect(programsOnPath(sealed)).toEqual([]);
    const r = spawnSync('python3', ['-c', 'x'], { env: { PATH: sealed }, encoding: 'utf8' });
    expect(r.stdout.trim()).toBe(`python from ${join(usrBin, 'python3')} with -c x`);
    expect(sealedDirs([site, usrBin], shadows)).toBe(shadows[usrBin]);
  });

  it('no test names a system PATH literally (on a GPU box /usr/bin holds nvidia-smi): they use barePath()', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.tsx?$/.test(e.name) && !p.includes(join('helpers', ''))) {
          if (/\/usr\/bin:\/bin/.test(readFileSync(p, 'utf8'))) offenders.push(relative(ROOT, p));
        }
      }
    };
    walk(join(ROOT, '__tests__'));
    expect(offenders).toEqual([]);
  });
});
