/**
 * One sanitizer for everything that reaches a terminal (src/text/printable.ts): text from files, Slurm's
 * answers, nvidia-smi and error messages is shown escaped; a child's output lines (src/observe/lines.ts)
 * have the same control characters removed. They agree on every code point; a bad value holding a newline
 * is shown escaped on one line.
 */
import { describe, expect, it } from 'vitest';
import { expectOneLineError, runCli } from '../helpers/cli.js';
import { describeError, UsageError } from '../../src/text/errors.js';
import { LineSplitter, cleanLine, type LineSink } from '../../src/observe/lines.js';
import { hasControl, printable } from '../../src/text/printable.js';

function collect(chunks: (string | Buffer)[]): string[] {
  const out: string[] = [];
  const sink: LineSink = {
    line: (t) => out.push(t),
    lines: (t) => out.push(...t.split('\n')),
    partial: () => {},
  };
  const s = new LineSplitter();
  for (const c of chunks) s.feed(c, sink);
  s.flush(sink);
  return out;
}

describe('one sanitizer for the terminal', () => {
  it('the pane and the printed text agree on what a control character is, code point by code point', () => {
    const disagree: string[] = [];
    for (let c = 0; c <= 0xff; c++) {
      if (c === 0x0a || c === 0x0d) continue; // line ends: the splitter's own business
      const ch = String.fromCharCode(c);
      const dropped = !cleanLine(`a${ch}b`).includes(ch); // a tab is expanded to spaces
      if (dropped !== hasControl(ch)) disagree.push(`U+${c.toString(16).padStart(4, '0')}`);
    }
    expect(disagree).toEqual([]);
  });

  it('C1 controls from a trainer never reach a display line: alone on a line, in a block, in a redraw', () => {
    const c1 = Array.from({ length: 32 }, (_, k) => String.fromCharCode(0x80 + k));
    const osc52 = '\u009d52;c;Y3VybCBldmlsIHwgc2g=\u009c';
    const lines = collect([
      `${osc52}\n`,
      `plain line\n${c1.join('')}\nnext\n`,
      `progress 1\rprogress 2 ${c1.join('')}\n`,
      Buffer.from(`\u0090dcs payload\u009c\n`, 'utf8'),
    ]);
    expect(lines.join('\n')).not.toMatch(/[\u0080-\u009f\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(lines[0]).toBe('52;c;Y3VybCBldmlsIHwgc2g=');
    expect(lines).toContain('plain line');
    expect(lines).toContain('next');
  });

  it('printable escapes C1 too, so a Slurm answer or a file name is inert on one line', () => {
    expect(printable('RUNNING\u009d0;pwned\u009c')).toBe('RUNNING\\x9d0;pwned\\x9c');
    expect(printable('n1\x1b]0;title\x07')).toBe('n1\\x1b]0;title\\x07');
  });

  it('an error and its hint are one line each, whatever the values they quote', () => {
    const text = describeError(new UsageError("--time '1\n2' is not a Slurm time", 'give\rHH:MM:SS\x1b[2J'));
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toBe("--time '1\\n2' is not a Slurm time\n  hint: give\\rHH:MM:SS\\x1b[2J");
  });

  it('a bad value holding a newline is shown escaped on one line (launch --slurm --time)', () => {
    const r = runCli(['launch', 'zero3', '--slurm', '--time', '1\n2', '--dry-run']);
    expectOneLineError(r, /--time '1\\n2' is not a Slurm time/);
  });
});
