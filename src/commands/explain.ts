/** `zerowiz explain NAME|FILE`: every value accelerate and DeepSpeed will use for each step, and where it came from. */
import { Option, type Command } from 'commander';
import type { CommandContext } from './context.js';
import type { ExplainFlags } from './explain-run.js';
import { oneOf } from './usage.js';

const load = () => import('./explain-run.js');

/** What `Accelerator(mixed_precision=...)` takes. */
const SCRIPT_PRECISIONS = ['no', 'fp16', 'bf16', 'fp8'] as const;

const HELP_AFTER = `
For each step (or the one --step names): the accelerate config it runs with (its --config_file, else
accelerate's default config file), then every value accelerate and DeepSpeed will use, each with its source
(the preset or zerowiz's default, the accelerate YAML, the DeepSpeed JSON, a launch flag in the step's argv, an
ACCELERATE_* variable of this environment, accelerate's default config, accelerate's or DeepSpeed's default,
or "filled at prepare()" from the script) and the rule that decided it, what it won over, and DeepSpeed's
batch identity train_batch_size = micro batch x accumulation x GPUs with each factor's source.

The script's side is not in any file: describe it with the --script-* flags to see the values it fills
(the DataLoader's batch_size, Accelerator(gradient_accumulation_steps=...), Accelerator(mixed_precision=...),
model.config.hidden_size); without them those values are "(unknown)".

--since-last compares with the newest run record of the same preset in this directory that succeeded (the
newest at all when none did): each value that changed, before and after, with its source.

Exit code 1 when accelerate or DeepSpeed would refuse a step (the errors say why).`;

/** Registers `zerowiz explain`. */
export function registerExplain(program: Command, ctx: CommandContext): void {
  program
    .command('explain')
    .argument('<preset>', 'a preset name or file, or an accelerate config YAML')
    .description('every value accelerate and DeepSpeed will use for each step, where it came from and why')
    .addOption(new Option('--step <name>', 'only this step'))
    .addOption(new Option('--since-last', 'what changed since the last run of this preset in this directory'))
    .addOption(
      new Option(
        '--json',
        'print JSON: {target, steps: [{name, config, deepspeed, values: [{key, value, source, where, rule, overridden: [{value, source, where}]}], batch, errors, warnings}], sinceLast?}',
      ),
    )
    .addOption(
      new Option('--script-batch-size <n>', 'the DataLoader\'s batch_size (train_micro_batch_size_per_gpu "auto")'),
    )
    .addOption(new Option('--script-accumulation <n>', "the script's Accelerator(gradient_accumulation_steps=N)"))
    .addOption(
      new Option('--script-mixed-precision <p>', "the script's Accelerator(mixed_precision=...)")
        .choices(SCRIPT_PRECISIONS)
        .argParser(
          oneOf(
            SCRIPT_PRECISIONS,
            (v) => `--script-mixed-precision '${v}' is not one of ${SCRIPT_PRECISIONS.join(', ')}`,
            '--script-mixed-precision',
          ),
        ),
    )
    .addOption(new Option('--script-hidden-size <h>', "the model's config.hidden_size, or none (no model.config)"))
    .addHelpText('after', HELP_AFTER)
    .action(async (ref: string, opts: ExplainFlags) => ctx.setExitCode(await (await load()).runExplain(ref, opts)));
}
