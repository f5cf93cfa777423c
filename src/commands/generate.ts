import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { addAnswerOptions } from './answer-flags.js';
import { oneOf } from './usage.js';

/** What `generate --print` prints. */
const PRINT_KINDS = ['yaml', 'json'] as const;

/** Registers `zerowiz generate`: answers as flags (or a preset) to the accelerate YAML and DeepSpeed JSON. */
export function registerGenerate(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('generate')
    .description('write the accelerate YAML and the DeepSpeed JSON from answer flags or a preset, without questions')
    .addOption(
      new Option(
        '--out <dir>',
        'write DIR/accelerate_config.yaml and DIR/ds_config.json (backups of differing files, atomic writes)',
      ),
    )
    .addOption(
      new Option('--print <which>', 'print one file to stdout instead')
        .choices(PRINT_KINDS)
        .argParser(oneOf(PRINT_KINDS, (v) => `--print '${v}' is not one of ${PRINT_KINDS.join(', ')}`, '--print')),
    )
    .addOption(new Option('--force', 'write even when validation reports errors'));
  addAnswerOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  zerowiz generate --mode 3-offload --num-processes 8 --mixed-precision bf16 --out ./configs
  zerowiz generate --preset qwen-image-lora-lowvram --print yaml
  zerowiz generate --from ~/.cache/huggingface/accelerate/default_config.yaml --mode 3 --out .

Modes: 1, 2, 2-offload, 3, 3-offload (--offload-device cpu|nvme, --nvme-path DIR).
Exit codes: 0 written or printed; 2 bad flags, bad values or a setup accelerate/DeepSpeed would refuse (nothing written).`,
  );
  cmd.action(async (opts: Record<string, unknown>) => {
    const { runGenerate } = await import('./generate-run.js');
    ctx.setExitCode(await runGenerate(opts));
  });
}
