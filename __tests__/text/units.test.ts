import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/text/errors.js';
import { runCli } from '../helpers/cli.js';
import { decimalSizeNote, formatBytes, formatBytesShort, formatCount } from '../../src/text/format.js';
import { parseBytes, parseCount, parseInteger } from '../../src/text/units.js';

describe('parseCount', () => {
  it.each([
    ['20.4B', 20_400_000_000],
    ['7e9', 7_000_000_000],
    ['350M', 350_000_000],
    ['1.3T', 1_300_000_000_000],
    ['120M', 120_000_000],
    ['120k', 120_000],
    ['2851e6', 2_851_000_000],
    [' 8b ', 8_000_000_000],
  ])('%s = %d', (text, n) => expect(parseCount(text)).toBe(n));
  it.each(['abc', '', '-5B', '0', '12X', '1.2.3B', 'B'])('rejects %j with a UsageError', (text) => {
    expect(() => parseCount(text, '--params')).toThrow(UsageError);
  });
});

describe('parseBytes: GiB, G and bare numbers are 2^30; GB is 10^9', () => {
  it.each([
    ['80GiB', 80 * 2 ** 30],
    ['80G', 80 * 2 ** 30],
    ['80', 80 * 2 ** 30],
    ['80GB', 80e9],
    ['141G', 141 * 2 ** 30],
    ['1.5TiB', 1.5 * 2 ** 40],
    ['1TB', 1e12],
    ['512MiB', 512 * 2 ** 20],
    ['4096B', 4096],
  ])('%s = %d bytes', (text, n) => expect(parseBytes(text)).toBe(n));
  it.each(['lots', '-80GiB', '0GiB', '80 gigs', '80XB'])('rejects %j', (text) => {
    expect(() => parseBytes(text, '--gpu-memory')).toThrow(UsageError);
  });
});

describe('parseInteger', () => {
  it('accepts whole numbers in range', () => {
    expect(parseInteger('8', '--gpus-per-node', 1, 1024)).toBe(8);
    expect(parseInteger(' 1 ', '--nodes')).toBe(1);
  });
  it.each(['0', '-1', '1.5', 'two', '', '2000'])('rejects %j for 1..1024', (text) => {
    expect(() => parseInteger(text, '--gpus-per-node', 1, 1024)).toThrow(UsageError);
  });
  it('names the flag in the message', () => {
    expect(() => parseInteger('0', '--gpus-per-node', 1, 1024)).toThrow("--gpus-per-node '0' is out of range");
  });
});

describe('formatting', () => {
  it('formatBytesShort drops a trailing .0 and keeps one decimal', () => {
    expect(formatBytesShort(80 * 2 ** 30)).toBe('80 GiB');
    expect(formatBytesShort(31.44 * 2 ** 30)).toBe('31.4 GiB');
    expect(formatBytesShort(1.5 * 2 ** 40)).toBe('1.5 TiB');
    expect(formatBytesShort(512 * 2 ** 20)).toBe('512 MiB');
    expect(formatBytesShort(-2 * 2 ** 30)).toBe('-2 GiB');
    expect(formatBytesShort(12)).toBe('12 B');
  });
  it('formatBytes and formatCount', () => {
    expect(formatBytes(71.69 * 2 ** 30)).toBe('71.69 GiB');
    expect(formatCount(20.4e9)).toBe('20.4B');
    expect(formatCount(350e6)).toBe('350M');
  });
});

describe('sizes that read otherwise than they look', () => {
  it('80GB is 10^9-byte units, said with what it comes to; 80G and 80GiB are not', () => {
    expect(decimalSizeNote('80GB')).toBe('80GB = 74.51 GiB (GB counts 10^9; 80G or 80GiB counts 2^30)');
    expect([decimalSizeNote('80G'), decimalSizeNote('80GiB'), decimalSizeNote('80')]).toEqual([null, null, null]);
  });

  it('2Tb is terabits: refused with the two ways to write bytes, never read as 2 TB', () => {
    expect(() => parseBytes('2Tb', 'CPU memory')).toThrow(/CPU memory '2Tb' is in bits/);
    try {
      parseBytes('2Tb');
    } catch (e) {
      expect((e as UsageError).hint).toBe('write 2TB for 2 x 10^12 bytes or 2TiB for 2 x 2^40');
    }
    expect(parseBytes('2TB')).toBe(2e12);
  });

  it('the CLI says it once for a memory flag in decimal units', () => {
    const r = runCli(['generate', '--mode', '2', '--gpu-memory', '80GB', '--model-params', '7B', '--print', 'yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'zerowiz: note: --gpu-memory 80GB = 74.51 GiB (GB counts 10^9; 80G or 80GiB counts 2^30)',
    );
    expect(runCli(['generate', '--mode', '2', '--gpu-memory', '80GiB', '--print', 'yaml']).stderr).not.toContain(
      'counts 10^9',
    );
  });
});
