/**
 * The Slurm dry run's comments say what its commands do (issue 22): a pass pinned to zerowiz's config without
 * DeepSpeed was commented "(no --config_file, as in the setup)" above a command that passes that --config_file.
 */
import { describe, expect, it } from 'vitest';
import { runCli, sandbox } from '../helpers/cli.js';

/** Each `# pass k/n: ...` comment of a script with the accelerate command under it. */
function passes(script: string): { comment: string; command: string }[] {
  const lines = script.split('\n');
  const out: { comment: string; command: string }[] = [];
  lines.forEach((l, i) => {
    if (!l.startsWith('# pass ')) return;
    const end = lines.findIndex((x, j) => j > i && x.startsWith('rc=$?'));
    out.push({ comment: l, command: lines.slice(i + 1, end).join('\n') });
  });
  return out;
}

describe('the Slurm dry run', () => {
  it("a pinned pass's comment names the config its command passes; an unpinned one says it has none", () => {
    const box = sandbox();
    const pinned = runCli(['launch', 'qwen-image-lora-lowvram', '--slurm', '--dry-run', '--pin-step', 'data_process'], {
      env: box.env,
      cwd: box.cwd,
    });
    expect(pinned.code, pinned.stderr).toBe(0);
    const [data, train] = passes(pinned.stdout);
    expect(data!.command).toMatch(/--config_file \S*accelerate_no_deepspeed\.yaml /);
    expect(data!.comment).toBe(
      '# pass 1/2: data_process (--config_file accelerate_no_deepspeed.yaml: without DeepSpeed)',
    );
    expect(train!.comment).toBe('# pass 2/2: train');
    const plain = runCli(['launch', 'zero3', '--slurm', '--dry-run'], { env: box.env, cwd: box.cwd });
    expect(plain.code, plain.stderr).toBe(0);
    for (const p of passes(plain.stdout))
      expect(p.comment.includes('no --config_file')).toBe(!p.command.includes('--config_file'));
  });
});
