/**
 * The files promises, as users meet them through the built bin: preset names, deleted copies, files zerowiz
 * cannot parse, symbolic links, the YAML+JSON pair, parallel writers, special and huge files, broken presets,
 * imports that name a missing JSON, and OS errors. Real symlinks, FIFOs, device files and (as root) tmpfs.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN } from '../helpers/pty.js';
import { expectOneLineError, runCli, sandbox, tempDir } from '../helpers/cli.js';
import { mountTmpfs, unmountAll } from '../helpers/tmpfs.js';

afterAll(() => unmountAll());

const GEN = ['generate', '--mode', '2', '--num-processes', '8'];

/** Files of a directory whose name marks a leftover: temp files and locks. */
function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((f) => /\.tmp$|tmp-|\.lock$/.test(f));
}

describe('preset names (every verb checks them the same way)', () => {
  it('delete refuses a name that climbs out of the presets folder; the file outside stays', () => {
    const box = sandbox();
    const target = join(box.home, '.cache', 'huggingface', 'accelerate', 'default_config.yaml');
    mkdirSync(join(target, '..'), { recursive: true });
    writeFileSync(target, 'compute_environment: LOCAL_MACHINE\n');
    mkdirSync(box.presets, { recursive: true });
    const r = runCli(['preset', 'delete', '../../../.cache/huggingface/accelerate/default_config'], {
      env: box.env,
    });
    expectOneLineError(r, /not a preset name/);
    expect(readFileSync(target, 'utf8')).toBe('compute_environment: LOCAL_MACHINE\n');
    expect(readdirSync(join(target, '..'))).toEqual(['default_config.yaml']);
  });

  it('save and show refuse the same names as delete', () => {
    const box = sandbox();
    for (const verb of [['save'], ['delete']]) {
      for (const name of ['../x', '.hidden', 'a/b', `${'n'.repeat(300)}`]) {
        expectOneLineError(runCli(['preset', ...verb, name], { env: box.env }), /not a preset name/);
      }
    }
  });

  it('says why a name is refused: a space, a leading dot, a slash, the length', () => {
    const box = sandbox();
    const why = (name: string) => runCli(['preset', 'save', name], { env: box.env }).stderr.split('\n')[0];
    expect(why('my preset')).toBe("zerowiz: 'my preset' is not a preset name: it holds a space");
    expect(why('.hidden')).toBe(
      "zerowiz: '.hidden' is not a preset name: it starts with '.' (a name starts with a letter or digit)",
    );
    expect(why('a/b')).toMatch(/is not a preset name: it holds '\/' \(a preset file is given by its path with \.yaml/);
    expect(why('n'.repeat(120))).toMatch(/is not a preset name: it is 120 characters long \(at most 100\)$/);
    expect(why('zero3!')).toBe("zerowiz: 'zero3!' is not a preset name: it holds '!'");
  });

  it('`x.yaml` names the preset x: save, show, launch --dry-run and delete find it', () => {
    const box = sandbox();
    const saved = runCli(['preset', 'save', 'x.yaml', '--preset', 'zero3'], { env: box.env, cwd: box.cwd });
    expect(saved.code).toBe(0);
    expect(readdirSync(box.presets)).toEqual(['x.yaml']);
    expect(runCli(['preset', 'show', 'x'], { env: box.env, cwd: box.cwd }).code).toBe(0);
    expect(runCli(['preset', 'show', 'x.yaml'], { env: box.env, cwd: box.cwd }).code).toBe(0);
    const dry = runCli(['launch', 'x.yaml', '--dry-run'], { env: box.env, cwd: box.cwd });
    expect(dry.stdout).toContain('train.py');
    expect(runCli(['preset', 'delete', 'x.yaml'], { env: box.env, cwd: box.cwd }).code).toBe(0);
    expect(readdirSync(box.presets).filter((f) => f.startsWith('x.yaml.deleted-'))).toHaveLength(1);
  });

  it("a preset saved from another keeps its notify: list (where its runs' notifications go)", () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(
      join(box.presets, 'base.yaml'),
      'name: base\nanswers:\n  num_processes: 1\n  mode: "2"\nsteps:\n  - name: train\n    uses_config: true\n    args: [train.py]\nnotify:\n  - https://ntfy.example.org/runs\n  - [notify-send, "{title}"]\n',
    );
    const saved = runCli(['preset', 'save', 'copy', '--preset', 'base', '--mode', '3'], { env: box.env, cwd: box.cwd });
    expect(saved.code, saved.stderr).toBe(0);
    const text = readFileSync(join(box.presets, 'copy.yaml'), 'utf8');
    expect(parseYaml(text).notify).toEqual(['https://ntfy.example.org/runs', ['notify-send', '{title}']]);
    const shown = runCli(['preset', 'show', 'copy'], { env: box.env, cwd: box.cwd });
    expect(shown.code).toBe(0);
  });

  it('a preset saved again under its own name keeps its notify: list (the save sets the setup, not the targets)', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(
      join(box.presets, 'mine.yaml'),
      'name: mine\nanswers:\n  num_processes: 1\n  mode: "2"\nnotify:\n  - https://ntfy.example.org/runs\n',
    );
    const saved = runCli(['preset', 'save', 'mine', '--mode', '3'], { env: box.env, cwd: box.cwd });
    expect(saved.code, saved.stderr).toBe(0);
    const text = readFileSync(join(box.presets, 'mine.yaml'), 'utf8');
    expect(parseYaml(text)).toMatchObject({ answers: { mode: '3' }, notify: ['https://ntfy.example.org/runs'] });
  });

  it('deleting the same name twice in one second keeps both deleted copies', () => {
    const box = sandbox();
    for (const d of ['first', 'second']) {
      expect(runCli(['preset', 'save', 'twice', '--description', d], { env: box.env }).code).toBe(0);
      expect(runCli(['preset', 'delete', 'twice'], { env: box.env }).code).toBe(0);
    }
    const copies = readdirSync(box.presets).filter((f) => f.startsWith('twice.yaml.deleted-'));
    expect(copies).toHaveLength(2);
    const texts = copies.map((f) => readFileSync(join(box.presets, f), 'utf8'));
    expect(texts.some((t) => t.includes('first'))).toBe(true);
    expect(texts.some((t) => t.includes('second'))).toBe(true);
  });
});

describe('files zerowiz cannot parse are never rewritten', () => {
  it('preset save over an unparseable preset refuses and leaves it byte for byte', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    const file = join(box.presets, 'mine.yaml');
    writeFileSync(file, 'answers: [unclosed\n');
    const r = runCli(['preset', 'save', 'mine', '--mode', '3'], { env: box.env });
    expectOneLineError(r, /mine\.yaml.*cannot (be )?(read|parse)|not valid YAML/);
    expect(readFileSync(file, 'utf8')).toBe('answers: [unclosed\n');
    expect(readdirSync(box.presets)).toEqual(['mine.yaml']);
  });
});

describe('symbolic links: zerowiz refuses to write through them', () => {
  it('generate --out refuses a linked accelerate_config.yaml; the link, its target and the JSON slot are untouched', () => {
    const outside = tempDir();
    const target = join(outside, 'precious.yaml');
    writeFileSync(target, 'precious: true\n');
    const out = tempDir();
    symlinkSync(target, join(out, 'accelerate_config.yaml'));
    const r = runCli([...GEN, '--out', out]);
    expectOneLineError(r, /accelerate_config\.yaml: it is a symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('precious: true\n');
    expect(readdirSync(outside)).toEqual(['precious.yaml']);
    expect(lstatSync(join(out, 'accelerate_config.yaml')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(out, 'accelerate_config.yaml'))).toBe(target);
    expect(readdirSync(out)).toEqual(['accelerate_config.yaml']);
  });

  it('preset save refuses a linked preset file', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    const outside = join(tempDir(), 'elsewhere.yaml');
    writeFileSync(outside, 'description: mine\n');
    symlinkSync(outside, join(box.presets, 'linked.yaml'));
    expectOneLineError(
      runCli(['preset', 'save', 'linked', '--mode', '3'], { env: box.env }),
      /linked\.yaml: it is a symbolic link/,
    );
    expect(readFileSync(outside, 'utf8')).toBe('description: mine\n');
  });
});

describe('the YAML and the JSON are written as a pair', () => {
  it('a directory in the place of accelerate_config.yaml refuses before anything is written', () => {
    const out = tempDir();
    mkdirSync(join(out, 'accelerate_config.yaml'));
    const r = runCli([...GEN, '--out', out]);
    expectOneLineError(r, /accelerate_config\.yaml: it is a directory/);
    expect(readdirSync(out)).toEqual(['accelerate_config.yaml']);
  });

  it('a full disk at any point leaves the old pair or the new pair, never a mix, and no temp file', (ctx) => {
    const mnt = mountTmpfs('256k');
    if (!mnt.ok) {
      console.log(`skipped: ${mnt.reason}`);
      ctx.skip();
      return;
    }
    const page = 4096;
    for (let freePages = 0; freePages <= 8; freePages++) {
      const out = join(mnt.dir, `k${freePages}`);
      mkdirSync(out);
      writeFileSync(join(out, 'accelerate_config.yaml'), 'old: yaml\n');
      writeFileSync(join(out, 'ds_config.json'), '{"old": "json"}\n');
      const filler = join(mnt.dir, 'filler');
      writeFileSync(filler, '');
      const free = Number(spawnSync('stat', ['-f', '-c', '%a', mnt.dir], { encoding: 'utf8' }).stdout) * page;
      truncateSync(filler, 0);
      writeFileSync(filler, Buffer.alloc(Math.max(0, free - freePages * page)));
      const r = runCli([...GEN, '--out', out]);
      const yaml = readFileSync(join(out, 'accelerate_config.yaml'), 'utf8');
      const json = readFileSync(join(out, 'ds_config.json'), 'utf8');
      const oldPair = yaml === 'old: yaml\n' && json === '{"old": "json"}\n';
      const newPair = yaml.includes('deepspeed_config_file') && json.includes('zero_optimization');
      expect({ freePages, mixed: !oldPair && !newPair }).toEqual({ freePages, mixed: false });
      if (newPair) expect(r.code).toBe(0);
      else expectOneLineError(r, /no space left on device/i);
      expect(leftovers(out)).toEqual([]);
      writeFileSync(filler, '');
    }
  });

  it('a read-only file system is one line naming the directory, exit 2', (ctx) => {
    const mnt = mountTmpfs('64k', true);
    if (!mnt.ok) {
      console.log(`skipped: ${mnt.reason}`);
      ctx.skip();
      return;
    }
    const r = runCli([...GEN, '--out', mnt.dir]);
    expectOneLineError(r, /read-only file system/);
    expect(r.stderr).toContain(mnt.dir);
  });
});

describe('parallel writers', () => {
  it('20 parallel `generate --out` into one directory: every reported write survives (as the file or a backup)', async () => {
    const out = tempDir();
    const runs = Array.from({ length: 20 }, (_, i) => {
      const child = spawn(
        process.execPath,
        [BIN, ...GEN, '--gradient-accumulation-steps', String(i + 1), '--out', out],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
        child.on('close', (code) => res({ code, stdout, stderr })),
      );
    });
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual(results.map(() => 0));
    const jsons = readdirSync(out).filter((f) => f.startsWith('ds_config.json'));
    const steps = new Set(
      jsons.map(
        (f) =>
          (JSON.parse(readFileSync(join(out, f), 'utf8')) as { gradient_accumulation_steps: number })
            .gradient_accumulation_steps,
      ),
    );
    expect([...steps].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(jsons).toHaveLength(20);
    expect(leftovers(out)).toEqual([]);
  }, 120_000);
});

describe('only regular files are read, up to a size cap', () => {
  const hang = { timeout: 60_000 };
  it('a FIFO given to --from is refused at once (no hang)', () => {
    const dir = tempDir();
    const fifo = join(dir, 'fifo.yaml');
    spawnSync('mkfifo', [fifo]);
    const r = spawnSync(process.execPath, [BIN, 'generate', '--from', fifo, '--print', 'yaml'], {
      encoding: 'utf8',
      ...hang,
    });
    expectOneLineError({ code: r.status ?? 128, stdout: r.stdout, stderr: r.stderr }, /not a regular file/);
  });

  for (const dev of ['/dev/zero', '/dev/urandom']) {
    it(`${dev} given to --from is refused at once`, () => {
      const r = spawnSync(process.execPath, [BIN, 'generate', '--from', dev, '--print', 'yaml'], {
        encoding: 'utf8',
        ...hang,
      });
      expectOneLineError({ code: r.status ?? 128, stdout: r.stdout, stderr: r.stderr }, /not a regular file/);
    });
  }

  it('a 100 MB preset is reported and skipped; the others are listed', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    writeFileSync(join(box.presets, 'huge.yaml'), '');
    truncateSync(join(box.presets, 'huge.yaml'), 100 * 2 ** 20);
    const r = runCli(['preset', 'list'], { env: box.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('zero3-offload');
    expect(r.stderr).toMatch(/huge\.yaml: .*larger than/);
  });

  it('a 100 MB DeepSpeed JSON named by an imported YAML is refused with one line', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ds.json'), '');
    truncateSync(join(dir, 'ds.json'), 100 * 2 ** 20);
    writeFileSync(
      join(dir, 'acc.yaml'),
      `distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ${join(dir, 'ds.json')}\n`,
    );
    expectOneLineError(
      runCli(['generate', '--from', join(dir, 'acc.yaml'), '--print', 'json']),
      /ds\.json.*larger than/,
    );
  });
});

describe('a broken file in the presets folder is reported and skipped', () => {
  it('a dangling link, a FIFO, a directory and a bad name: `preset list` still works', () => {
    const box = sandbox();
    mkdirSync(box.presets, { recursive: true });
    symlinkSync(join(box.home, 'gone.yaml'), join(box.presets, 'dangling.yaml'));
    spawnSync('mkfifo', [join(box.presets, 'pipe.yaml')]);
    mkdirSync(join(box.presets, 'folder.yaml'));
    writeFileSync(join(box.presets, 'ok.yaml'), 'description: fine\n');
    const r = runCli(['preset', 'list', '--json'], { env: box.env });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout) as { presets: Array<{ name: string }>; problems: Array<{ path: string }> };
    expect(j.presets.map((p) => p.name)).toContain('ok');
    expect(j.problems.map((p) => p.path).sort()).toEqual(
      ['dangling.yaml', 'folder.yaml', 'pipe.yaml'].map((f) => join(box.presets, f)),
    );
  });

  it('a presets path that is a file: list shows the built-ins and names the problem; save is one line, exit 2', () => {
    const box = sandbox();
    mkdirSync(join(box.presets, '..'), { recursive: true });
    writeFileSync(box.presets, 'not a folder\n');
    const list = runCli(['preset', 'list'], { env: box.env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('zero3');
    expect(list.stderr).toContain(box.presets);
    expectOneLineError(runCli(['preset', 'save', 'x'], { env: box.env }), /presets.*not a directory/);
    expect(readFileSync(box.presets, 'utf8')).toBe('not a folder\n');
  });

  it('a presets path that is a link loop: one line, exit 2', () => {
    const box = sandbox();
    mkdirSync(join(box.presets, '..'), { recursive: true });
    symlinkSync(box.presets, box.presets);
    expectOneLineError(runCli(['preset', 'save', 'x'], { env: box.env }), /symbolic links/);
    expect(runCli(['preset', 'list'], { env: box.env }).code).toBe(0);
  });
});

describe('importing a YAML whose deepspeed_config_file is missing or unreadable', () => {
  function yamlNaming(json: string): string {
    const dir = tempDir();
    const p = join(dir, 'acc.yaml');
    writeFileSync(
      p,
      `compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ${json}\n`,
    );
    return p;
  }
  it('generate --from: a missing JSON is an error naming it; no ZeRO-2 defaults are printed', () => {
    const r = runCli(['generate', '--from', yamlNaming('/nowhere/ds_z3.json'), '--print', 'json']);
    expectOneLineError(r, /\/nowhere\/ds_z3\.json/);
    expect(r.stdout).toBe('');
  });
  it('generate --from: an unreadable JSON (a directory) is an error naming it', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'ds.json'));
    expectOneLineError(
      runCli(['generate', '--from', yamlNaming(join(dir, 'ds.json')), '--print', 'json']),
      /ds\.json.*directory/,
    );
  });
});

describe('OS errors are one line naming the path, exit 2', () => {
  it('--out that is a file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    expectOneLineError(runCli([...GEN, '--out', join(dir, 'f')]), /f.*not a directory/);
  });
  it('--out with a name too long', () => {
    const long = join(tempDir(), 'a'.repeat(300));
    expectOneLineError(runCli([...GEN, '--out', long]), /name too long/);
  });
  it('--from a directory', () => {
    expectOneLineError(runCli(['generate', '--from', tempDir(), '--print', 'yaml']), /is a directory/);
  });
});
