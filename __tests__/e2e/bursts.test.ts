/**
 * Key bursts across screen changes, in a real pseudo-terminal: each burst is ONE write (what a fast typist, a
 * paste or tmux's send-keys delivers in one read) that answers a question and goes on typing into the next
 * screens before any of them has been drawn. Every key must land on the screen it was meant for: the files
 * written at the end say so, answer by answer. A burst is written as soon as its first screen shows, never
 * after waiting for the screen to settle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { BIN, KEYS, ROOT } from '../helpers/pty.js';
import { settled, startWizard } from '../helpers/wizard-pty.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const { enter: ENTER, backspace: BS, esc: ESC } = KEYS;

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
});

describe('key bursts across screen changes keep every key', () => {
  it('text -> text -> text, text -> list -> text, list -> list -> text, into the review and back, into the finish screen', async () => {
    const { s, cwd } = startWizard({ cols: 100, rows: 40 });
    await s.waitFor('H100');
    await settled(s, 'New setup');
    s.write(ENTER);

    // text -> text -> text: Enter, Backspace, a value, Enter, the next value, ... in one write.
    await s.waitFor('How many machines');
    s.write(`${BS}2${ENTER}${BS}1${ENTER}10.0.0.1${ENTER}`);

    // text -> list -> text: the port, then "same network?" answered by its number (2 = no), then the
    // rendezvous backend typed into the text field that question opens (its default "static" erased first).
    await s.waitFor('Port for talking to the main process');
    s.write(`${BS.repeat(5)}29501${ENTER}2${BS.repeat(6)}c10d${ENTER}`);

    // list -> list -> list (the model catalog) -> text (its largest layer) -> text -> text -> the workload: list (full or LoRA) -> text
    // (micro-batch) -> text (tokens or pixels) -> list (gradient checkpointing: 2 = yes) -> list (the optimizer:
    // AdamW) -> the ZeRO table.
    await s.waitFor('Check distributed operations');
    s.write(`${ENTER.repeat(9)}2${ENTER}`);

    // The ZeRO table (6 = ZeRO-3 offload), then text, text, list, list, text, list, text, text, text, text,
    // list: every question to the review, in one write.
    await s.waitFor('Which ZeRO mode');
    s.write(
      [
        '6',
        `${BS.repeat(4)}4${ENTER}`, // gradient accumulation: auto -> 4
        `${BS.repeat(4)}0.5${ENTER}`, // clipping: auto -> 0.5
        ENTER, // save 16-bit weights: yes
        ENTER, // zero.Init: yes
        ENTER, // MoE: none
        ENTER, // launcher: pdsh
        `/etc/hosts.zw${ENTER}`, // hostfile
        ENTER, // exclusion filter: none
        ENTER, // inclusion filter: none
        `${BS.repeat(2)}16${ENTER}`, // GPUs in total
        ENTER, // mixed precision: bf16 -> the review
        ESC, // and back to that question (an Esc ends a write: ESC + a key would be Alt+key)
      ].join(''),
    );

    // Back on the last question: 3 answers it again (fp16) and returns to the review; then into the finish
    // screen: Finish, write to a directory, accept the directory, done.
    await s.waitFor((x) => x.includes('Mixed precision') && !x.includes('Review:'));
    s.write(`3${ENTER}${ENTER}${ENTER}${ENTER}`);
    expect(await s.exited).toBe(0);

    const yaml = parseYaml(readFileSync(join(cwd, 'accelerate_config.yaml'), 'utf8')) as Record<string, unknown>;
    expect(yaml).toMatchObject({
      num_machines: 2,
      machine_rank: 1,
      main_process_ip: '10.0.0.1',
      main_process_port: 29501,
      same_network: false,
      rdzv_backend: 'c10d',
      num_processes: 16,
      deepspeed_config: {
        deepspeed_multinode_launcher: 'pdsh',
        deepspeed_hostfile: '/etc/hosts.zw',
        zero3_init_flag: true,
      },
    });
    const json = JSON.parse(readFileSync(join(cwd, 'ds_config.json'), 'utf8')) as Record<string, unknown>;
    expect(json).toMatchObject({
      zero_optimization: { stage: 3, offload_optimizer: { device: 'cpu' }, offload_param: { device: 'cpu' } },
      gradient_accumulation_steps: 4,
      gradient_clipping: 0.5,
      fp16: { enabled: true },
      bf16: { enabled: false },
    });
    expect(json.activation_checkpointing).toBeDefined();
  });
});
