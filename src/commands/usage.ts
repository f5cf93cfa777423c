/**
 * commander's usage errors in zerowiz's words: an unknown command, option or choice, a missing or extra
 * argument are one line and a hint, with the near miss the one "did you mean" rule finds (src/text/suggest.ts);
 * commander's own text never reaches the user. Every command of the CLI is a `ZerowizCommand`.
 */
import { Command, type HelpContext, type Option } from 'commander';
import { UsageError } from '../text/index.js';
import { NearMiss, orList } from '../text/index.js';

/** `zerowiz preset save`: the words that run a command, from the root. */
export function commandLine(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The long flags a command takes (its own and its parents'), the negations and hidden ones included. */
function longFlags(cmd: Command): string[] {
  const out: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent)
    for (const o of c.options as readonly Option[]) if (o.long) out.push(o.long);
  return out;
}

/** The names of a command's subcommands, as its help lists them (the implicit `help` command left out). */
function subcommandNames(cmd: Command): string[] {
  const help = cmd.createHelp();
  return help
    .visibleCommands(cmd)
    .map((c) => c.name())
    .filter((name) => name !== 'help');
}

/** A parser for a flag or an argument that takes one of `values`; anything else is a NearMiss naming them. */
export function oneOf<T extends string>(
  values: readonly T[],
  refuse: (value: string) => string,
  flag?: string,
): (value: string) => T {
  return (value: string) => {
    if ((values as readonly string[]).includes(value)) return value as T;
    throw new NearMiss(refuse(value), value, values, `use one of: ${values.join(', ')}`, flag);
  };
}

/** A command whose usage errors are zerowiz's (see the module's comment). */
export class ZerowizCommand extends Command {
  override createCommand(name?: string): Command {
    return new ZerowizCommand(name);
  }

  /** The first word given to the root that names no command, if any (`zerowiz lanch zero3`). */
  private strayCommand(): string | undefined {
    if (this.parent) return undefined;
    const first = this.args[0];
    if (first === undefined || first.startsWith('-')) return undefined;
    return this.commands.some((c) => c.name() === first || c.aliases().includes(first)) ? undefined : first;
  }

  /** An unknown (sub)command: `zerowiz lanch`, `zerowiz preset shwo`. */
  unknownCommand(): never {
    this.refuseCommand(this.parent ? (this.args[0] ?? '') : (this.strayCommand() ?? this.args[0] ?? ''));
  }

  /** Refuses `word` as a command of this one, with the nearest command named. */
  refuseCommand(word: string): never {
    const names = subcommandNames(this);
    const where = this.parent ? `${commandLine(this).replace(/^zerowiz /, '')} ` : '';
    throw new NearMiss(
      `unknown command '${where}${word}'`,
      word,
      names,
      this.parent
        ? `\`${commandLine(this)}\` takes ${orList(names)} (${commandLine(this)} --help)`
        : `the commands are: ${names.join(', ')} (zerowiz --help)`,
    );
  }

  unknownOption(flag: string): never {
    const stray = this.strayCommand();
    if (stray !== undefined) this.refuseCommand(stray);
    const name = flag.split('=')[0]!;
    throw new NearMiss(
      `unknown option '${name}'${this.parent ? ` for \`${commandLine(this)}\`` : ''}`,
      name,
      flag.startsWith('--') ? longFlags(this) : [],
      `see \`${commandLine(this)} --help\` for its options`,
    );
  }

  /** More arguments than the command takes (commander's private hook). */
  _excessArguments(received: string[]): never {
    const stray = this.strayCommand();
    if (stray !== undefined) this.refuseCommand(stray);
    const takes = this.registeredArguments.length;
    const extra = received[takes] ?? '';
    throw new UsageError(
      `\`${commandLine(this)}\` takes ${takes === 0 ? 'no arguments' : `${takes} argument${takes === 1 ? '' : 's'} (${this.registeredArguments.map((a) => a.name()).join(', ')})`}; '${extra}' is one too many`,
      `usage: ${commandLine(this)} ${this.usage()}`,
    );
  }

  missingArgument(name: string): never {
    throw new UsageError(
      `\`${commandLine(this)}\` needs a ${name}`,
      `usage: ${commandLine(this)} ${this.usage()} (${commandLine(this)} --help)`,
    );
  }

  optionMissingArgument(option: Option): never {
    const flags = option.flags.replace(/^-\w, /, '');
    throw new UsageError(`${option.long ?? option.flags} needs a value`, `give it as ${flags}`);
  }

  /** A command that only groups others (`zerowiz preset`) run without one of them. */
  override help(context?: HelpContext): never;
  override help(cb: (str: string) => string): never;
  override help(context?: HelpContext | ((str: string) => string)): never {
    if (typeof context !== 'object' || !context.error) return super.help(context as HelpContext);
    const names = subcommandNames(this);
    throw new UsageError(
      `\`${commandLine(this)}\` needs one of: ${names.join(', ')}`,
      `e.g. \`${commandLine(this)} ${names[0] ?? ''}\` (${commandLine(this)} --help)`,
    );
  }

  /** Any other usage error commander finds: its message, reworded as one zerowiz line. */
  override error(message: string, options?: { code?: string; exitCode?: number }): never {
    if (options?.code === 'commander.executeSubCommandAsync' || options?.exitCode === 0)
      return super.error(message, options);
    throw new UsageError(message.replace(/^error: /, '').replace(/\.$/, ''), `see \`${commandLine(this)} --help\``);
  }
}
