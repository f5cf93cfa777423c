/** `zerowiz notify test [TARGET...]`: send a sample event. The work is in notify-run.ts. */
import { Argument, type Command } from 'commander';
import type { CommandContext } from './context.js';
import { oneOf } from './usage.js';

/** What `notify` can do. */
const NOTIFY_ACTIONS = ['test'] as const;

/** Registers `notify`. */
export function registerNotify(program: Command, ctx: CommandContext): void {
  program
    .command('notify')
    .addArgument(
      new Argument('<action>', 'test: send a sample event')
        .choices(NOTIFY_ACTIONS)
        .argParser(oneOf(NOTIFY_ACTIONS, (v) => `'${v}' is not something notify does (test)`)),
    )
    .argument('[target...]', 'a URL or a command, as `launch --notify` takes it (default: ZEROWIZ_NOTIFY)')
    .option('--preset <name>', "also the targets of this preset's notify: list")
    .description("send a sample of a run's end to notification targets, to see that they work")
    .addHelpText(
      'after',
      [
        '',
        'A target is a URL or a command. URLs get a POST: ntfy topics (https://ntfy.sh/TOPIC) the text with a title,',
        'Slack, Discord and Teams incoming webhooks their own JSON, any other endpoint the event as JSON',
        '(docs/notify.md has its shape); name the style before the scheme when the host does not say it',
        '(ntfy+https://ntfy.example.org/TOPIC, json+https://..., slack+..., discord+..., teams+...).',
        'A command runs without a shell, its words as written ({title}, {event} and {run} are filled in), the',
        'text on its stdin and the event as JSON in ZEROWIZ_PAYLOAD: e.g. "mail -s {title} me@example.org".',
        'Exit codes: 0 every target took it, 1 one did not, 2 bad input.',
      ].join('\n'),
    )
    .action(async (action: string, targets: string[], flags: { preset?: string }) => {
      ctx.setExitCode(await (await import('./notify-run.js')).notifyCommand(action, targets, flags));
    });
}
