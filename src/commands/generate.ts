import { Option, type Command } from 'commander';
import type { CommandContext } from '../cli.js';
import { UsageError } from '../errors.js';
import { toAccelerateYaml, toDeepSpeedJson } from '../emit.js';
import { validate } from '../validate.js';
import { setupInDir, writeConfigFiles } from '../write.js';
import { quote } from 'shell-quote';
import { addAnswerOptions, setupFromOptions } from './answer-flags.js';
import { formatFinding, formatWrite, reportFindings } from './report.js';

/** Registers `zerowiz generate`: answers as flags (or a preset) to the accelerate YAML and DeepSpeed JSON. */
export function registerGenerate(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('generate')
    .description('write the accelerate YAML and the DeepSpeed JSON from answer flags or a preset, without questions')
    .addOption(new Option('--out <dir>', 'write DIR/accelerate_config.yaml and DIR/ds_config.json (backups of differing files, atomic writes)'))
    .addOption(new Option('--print <which>', 'print one file to stdout instead').choices(['yaml', 'json']))
    .addOption(new Option('--force', 'write even when validation reports errors'));
  addAnswerOptions(cmd);
  cmd.addHelpText('after', `
Examples:
  zerowiz generate --mode 3-offload --num-processes 8 --mixed-precision bf16 --out ./configs
  zerowiz generate --preset qwen-image-lora-lowvram --print yaml
  zerowiz generate --from ~/.cache/huggingface/accelerate/default_config.yaml --mode 3 --out .

Modes: 1, 2, 2-offload, 3, 3-offload (--offload-device cpu|nvme, --nvme-path DIR).
Exit codes: 0 written or printed; 2 bad flags, bad values or a setup accelerate/DeepSpeed would refuse (nothing written).`);
  cmd.action(async (opts: Record<string, unknown>) => {
    if (opts.out === undefined && opts.print === undefined) {
      throw new UsageError('generate needs --out DIR or --print yaml|json', 'e.g. zerowiz generate --mode 2 --num-processes 8 --out ./configs');
    }
    if (opts.out !== undefined && opts.print !== undefined) throw new UsageError('--out and --print cannot be used together', 'pick one');
    let { setup } = setupFromOptions(opts);
    if (typeof opts.out === 'string') setup = setupInDir(setup, opts.out);
    const findings = validate(setup);
    const firstError = reportFindings(findings);
    if (firstError && !opts.force) {
      throw new UsageError(`${firstError.message}`, `${firstError.fix} (or pass --force to write it anyway)`);
    }
    if (firstError) for (const f of findings) process.stderr.write(`zerowiz: ${formatFinding(f)}\n`);
    if (opts.print === 'yaml') {
      process.stdout.write(toAccelerateYaml(setup));
      return;
    }
    if (opts.print === 'json') {
      process.stdout.write(`${toDeepSpeedJson(setup)}\n`);
      return;
    }
    const results = await writeConfigFiles(setup);
    for (const r of results) process.stdout.write(`${formatWrite(r)}\n`);
    process.stdout.write(`run: ${quote(['accelerate', 'launch', '--config_file', setup.files.accelerateConfig, 'train.py'])}\n`);
    ctx.setExitCode(0);
  });
}
