// A reference launcher for the launch bench's floor rows: a Node process that starts the child the way zerowiz
// does (stdout and stderr as two pipes) and does only what no launcher can skip: it reads both and, with
// `log`, appends every raw chunk to a log file (a WriteStream, as zerowiz's step log), in arrival order. No
// lines, no parsing, no output. Usage: node floor-reader.mjs discard|log LOGFILE CHILD ARGS...
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

const [mode, logPath, file, ...args] = process.argv.slice(2);
const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const log = mode === 'log' ? createWriteStream(logPath, { flags: 'a', highWaterMark: 4 * 1024 * 1024 }) : null;
const streams = [child.stdout, child.stderr];
for (const s of streams) {
  s.on('data', (chunk) => {
    // The same backpressure as zerowiz's: a full log buffer pauses both pipes until it drains.
    if (log && !log.write(chunk)) {
      for (const x of streams) x.pause();
      log.once('drain', () => {
        for (const x of streams) x.resume();
      });
    }
  });
}
child.on('close', (code) => {
  process.exitCode = code ?? 1;
  log?.end();
});
