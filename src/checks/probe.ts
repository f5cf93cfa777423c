/**
 * The Python side of the checks, measured once: ONE process of the interpreter that runs `accelerate` (the
 * shebang of its entry point, as pip wrote it) imports torch, accelerate and deepspeed, and asks the real
 * packages what `ds_report` knows (deepspeed.git_version_info's installed and compatible ops, an op builder's
 * own reasons, ninja, the compiler, CUDA_HOME and DeepSpeed's CUDA mismatch test) and what the installed
 * DeepSpeed says of the config's zero_optimization block (its own pydantic model: unknown keys, deprecated
 * ones). It prints one JSON object; everything the packages print goes to stderr. The judging is elsewhere
 * (python.ts, ops.ts, versions.ts, gpu.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import * as z from 'zod/mini';
import '../text/zod.js';
import { runBounded, whichSync } from '../proc/index.js';
import { envNumber, printable } from '../text/index.js';
import type { OpNeed } from './plan.js';

/** How long the probe may take (the imports of a cold machine, a compile test per op) before it counts as hung. */
export const PROBE_TIMEOUT_MS = 120_000;
/** The most of the probe's stderr kept for a failure's message. */
const STDERR_KEEP_CHARS = 2000;

/** What the probe is asked. */
export interface ProbeRequest {
  /** The ops the setup needs (their builders are asked why, when not compatible). */
  ops: Pick<OpNeed, 'name' | 'builder' | 'cuda'>[];
  /** The zero_optimization block the launch writes, validated by the installed DeepSpeed (null: skip). */
  zero: Record<string, unknown> | null;
  /** Whether to import deepspeed at all (a setup whose passes all run without DeepSpeed does not need it). */
  deepspeed: boolean;
}

const text = z.nullable(z.string());

/** One package as the interpreter sees it. */
const packageSchema = z.object({
  /** The installed distribution's version (importlib.metadata), or the module's __version__. */
  version: text,
  importable: z.boolean(),
  /** `ModuleNotFoundError: No module named 'deepspeed'`, or a broken import's error. */
  error: text,
  /** Where it was imported from. */
  path: text,
  /** The import's time. */
  ms: z.number(),
});

/** What deepspeed knows of one op. */
const opSchema = z.object({
  /** Prebuilt into the installed package (installed_ops, for this accelerator). */
  installed: z.boolean(),
  /** What op_builder's compatibility test answered (compatible_ops), null when deepspeed did not say. */
  compatible: z.nullable(z.boolean()),
  /** What the builder printed when asked again verbosely (its reasons), trimmed. */
  log: z.string(),
  /** DeepSpeed's CUDA test for a GPU build (assert_no_cuda_mismatch): null passed or not asked, else its message. */
  cudaProblem: text,
});

/**
 * The probe's answer, as a schema: an interpreter that prints something else (a shim, a site-customize that
 * writes to stdout, another program behind the name) is named as such, never a crash.
 */
const probeResultSchema = z.object({
  python: z.object({ executable: z.string(), version: z.string() }),
  packages: z.object({
    torch: packageSchema,
    accelerate: packageSchema,
    deepspeed: z.pipe(
      z.optional(z.nullable(packageSchema)),
      z.transform((v) => v ?? null),
    ),
  }),
  torch: z.nullable(
    z.object({
      cuda: text,
      hip: text,
      cudaAvailable: z.nullable(z.boolean()),
      deviceCount: z.nullable(z.number()),
      /** Warnings torch gave while looking for the GPUs (an old driver says so here). */
      warnings: z.array(z.string()),
      /** torch.utils.cpp_extension: ninja, CUDA_HOME; the C++ compiler it would call. */
      ninja: z.nullable(z.boolean()),
      cudaHome: text,
      cxx: text,
      cxxName: z.string(),
    }),
  ),
  deepspeed: z.nullable(
    z.object({
      ops: z.record(z.string(), opSchema),
      /** The torch and CUDA the prebuilt ops were built with (git_version_info.torch_info). */
      torchInfo: z.nullable(z.object({ version: z.string(), cuda_version: z.string() })),
      /** The accelerator its ops were built for, and the one it picks now. */
      builtFor: text,
      accelerator: text,
      /** The zero_optimization block through DeepSpeed's own model: its errors and the warnings it logged. */
      zeroConfig: z.nullable(
        z.object({ errors: z.array(z.string()), warnings: z.array(z.string()), unavailable: text }),
      ),
      error: text,
    }),
  ),
});

/** One package as the interpreter sees it. */
export type ProbePackage = z.infer<typeof packageSchema>;
/** What deepspeed knows of one op. */
export type ProbeOp = z.infer<typeof opSchema>;
/** The probe's answer. */
export type ProbeResult = z.infer<typeof probeResultSchema>;

/** A probe answer read back (the remembered one of probe-cache.ts): it, or null when it is not one. */
export function probeResultOf(data: unknown): ProbeResult | null {
  const r = z.safeParse(probeResultSchema, data);
  return r.success ? r.data : null;
}

/** Reads the probe's stdout: its answer, or why it is not one. */
export function parseProbeAnswer(stdout: string): { result: ProbeResult } | { problem: string } {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return {
      problem: `it printed something else than the probe's answer: ${printable(line.slice(0, 120)) || '(nothing)'}`,
    };
  }
  const r = z.safeParse(probeResultSchema, data);
  if (r.success) return { result: r.data };
  const i = r.error.issues[0];
  return {
    problem: `its answer is not the probe's (${i?.path.map(String).join('.') || 'the value'}: ${i?.message ?? 'damaged'})`,
  };
}

/**
 * How long the probe may take (override: ZEROWIZ_PROBE_TIMEOUT_MS, at least 100): importing torch and
 * DeepSpeed on a cold disk takes tens of seconds.
 */
export function probeTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return envNumber(env, 'ZEROWIZ_PROBE_TIMEOUT_MS', PROBE_TIMEOUT_MS);
}

/** The probe's Python source (run with `-c`; the request is argv[1]). */
export const PROBE_SOURCE = [
  'import importlib, io, json, logging, os, shutil, sys, time, contextlib, warnings',
  'real_out = os.dup(1)',
  'os.dup2(2, 1)  # whatever the packages print goes to stderr; the answer goes to the real stdout',
  'sys.stdout = sys.stderr',
  'req = json.loads(sys.argv[1])',
  'out = {"python": {"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3]}, "packages": {}, "torch": None, "deepspeed": None}',
  'def err(e):',
  '    return ("%s: %s" % (type(e).__name__, e))[:600]',
  'def pkg(name):',
  '    info = {"version": None, "importable": False, "error": None, "path": None, "ms": 0}',
  '    try:',
  '        import importlib.metadata as md',
  '        info["version"] = md.version(name)',
  '    except Exception:',
  '        pass',
  '    t = time.perf_counter()',
  '    mod = None',
  '    try:',
  '        mod = importlib.import_module(name)',
  '        info["importable"] = True',
  '        f = getattr(mod, "__file__", None)',
  '        info["path"] = os.path.dirname(f) if f else None',
  '        v = getattr(mod, "__version__", None)',
  '        if info["version"] is None and v is not None:',
  '            info["version"] = str(v)',
  '    except BaseException as e:',
  '        info["error"] = err(e)',
  '    info["ms"] = round((time.perf_counter() - t) * 1000)',
  '    out["packages"][name] = info',
  '    return mod',
  'torch = pkg("torch")',
  'pkg("accelerate")',
  'if torch is not None:',
  '    t = {"cuda": getattr(torch.version, "cuda", None), "hip": getattr(torch.version, "hip", None), "cudaAvailable": None, "deviceCount": None, "warnings": [], "ninja": None, "cudaHome": None, "cxx": None, "cxxName": os.environ.get("CXX", "c++")}',
  '    if t["cuda"] is not None or t["hip"] is not None:',
  '        with warnings.catch_warnings(record=True) as w:',
  '            warnings.simplefilter("always")',
  '            try:',
  '                t["cudaAvailable"] = bool(torch.cuda.is_available())',
  '                t["deviceCount"] = int(torch.cuda.device_count()) if t["cudaAvailable"] else 0',
  '            except BaseException as e:',
  '                t["warnings"].append(err(e))',
  '        t["warnings"] += [str(x.message)[:600] for x in w]',
  '    else:',
  '        t["cudaAvailable"] = False',
  '    if req.get("ops"):',
  '        try:',
  '            from torch.utils import cpp_extension as ce',
  '            t["ninja"] = bool(ce.is_ninja_available())',
  '            t["cudaHome"] = ce.CUDA_HOME',
  '        except BaseException as e:',
  '            t["warnings"].append(err(e))',
  '        t["cxx"] = shutil.which(t["cxxName"])',
  '    out["torch"] = t',
  'if req.get("deepspeed"):',
  '    ds = pkg("deepspeed")',
  '    if ds is not None:',
  '        d = {"ops": {}, "torchInfo": None, "builtFor": None, "accelerator": None, "zeroConfig": None, "error": None}',
  '        try:',
  '            gi = importlib.import_module("deepspeed.git_version_info")',
  '            installed = getattr(gi, "installed_ops", {}) or {}',
  '            compatible = getattr(gi, "compatible_ops", {}) or {}',
  '            ti = getattr(gi, "torch_info", None)',
  '            d["torchInfo"] = {"version": str(ti.get("version")), "cuda_version": str(ti.get("cuda_version"))} if isinstance(ti, dict) else None',
  '            d["builtFor"] = getattr(gi, "accelerator_name", None) or None',
  '            try:',
  '                from deepspeed.accelerator import get_accelerator',
  '                d["accelerator"] = get_accelerator()._name',
  '            except BaseException as e:',
  '                d["error"] = err(e)',
  '            ob = importlib.import_module("deepspeed.ops.op_builder")',
  '            for op in req.get("ops", []):',
  '                name = op["name"]',
  '                o = {"installed": bool(installed.get(name, False)) and (d["builtFor"] is None or d["builtFor"] == d["accelerator"]), "compatible": compatible.get(name), "log": "", "cudaProblem": None}',
  '                if not o["installed"]:',
  '                    buf = io.StringIO()',
  '                    try:',
  '                        b = getattr(ob, op["builder"])()',
  '                        with contextlib.redirect_stdout(buf):',
  '                            ok = bool(b.is_compatible(True))',
  '                        if o["compatible"] is None:',
  '                            o["compatible"] = ok',
  '                    except BaseException as e:',
  '                        buf.write(err(e))',
  '                        o["compatible"] = False',
  '                    o["log"] = buf.getvalue()[-1500:]',
  '                    if (out["torch"] or {}).get("cudaAvailable"):',
  '                        try:',
  '                            from deepspeed.ops.op_builder.builder import assert_no_cuda_mismatch',
  '                            with contextlib.redirect_stdout(io.StringIO()):',
  '                                assert_no_cuda_mismatch(name)',
  '                        except BaseException as e:',
  '                            o["cudaProblem"] = err(e)',
  '                d["ops"][name] = o',
  '        except BaseException as e:',
  '            d["error"] = err(e)',
  '        if req.get("zero") is not None:',
  '            got = []',
  '            class H(logging.Handler):',
  '                def emit(self, record):',
  '                    got.append(record.getMessage()[:400])',
  '            h = H(logging.WARNING)',
  '            lg = logging.getLogger("DeepSpeed")',
  '            lg.addHandler(h)',
  '            errors = []',
  '            unavailable = None',
  '            try:',
  '                zc = importlib.import_module("deepspeed.runtime.zero.config")',
  '            except BaseException as e:',
  '                zc = None',
  '                unavailable = err(e)',
  '            if zc is not None:',
  '                try:',
  '                    zc.DeepSpeedZeroConfig(**req["zero"])',
  '                except BaseException as e:',
  '                    errors.append(err(e))',
  '            lg.removeHandler(h)',
  '            d["zeroConfig"] = {"errors": errors, "warnings": got, "unavailable": unavailable}',
  '        out["deepspeed"] = d',
  '    else:',
  '        out["deepspeed"] = None',
  'os.write(real_out, json.dumps(out).encode())',
].join('\n');

/** The interpreter of a console script, as its first lines name it; why not, when they do not. */
export type Interpreter = { ok: true; python: string; how: string } | { ok: false; reason: string };

/**
 * The Python that runs `accelerate`: the shebang pip wrote into the entry point (`#!/venv/bin/python`;
 * `#!/usr/bin/env python3`, looked up on PATH; or, for a path too long for a shebang, pip's `/bin/sh`
 * trampoline `'''exec' "/long/path/python" "$0" "$@"`).
 */
export function interpreterOf(script: string, head: string, env: NodeJS.ProcessEnv = process.env): Interpreter {
  const lines = head.split('\n');
  const first = lines[0] ?? '';
  if (!first.startsWith('#!'))
    return { ok: false, reason: `${script} does not start with #! (not a script pip wrote)` };
  const words = first.slice(2).trim().split(/\s+/);
  const cmd = words[0] ?? '';
  if (/(^|\/)(ba)?sh$/.test(cmd)) {
    const m = /^'''exec' "?([^"]+?)"? "\$0" "\$@"/.exec(lines[1] ?? '');
    if (m) return { ok: true, python: m[1]!, how: `${script} (pip's /bin/sh trampoline)` };
    return { ok: false, reason: `${script} is a shell script, not pip's entry point of accelerate` };
  }
  if (/(^|\/)env$/.test(cmd)) {
    const name = words.find((w, i) => i > 0 && !w.startsWith('-'));
    if (!name) return { ok: false, reason: `${script}'s #! line names no program` };
    const found = whichSync(name, env);
    if (!found) return { ok: false, reason: `${script} runs \`${name}\` from PATH, and there is none` };
    return { ok: true, python: found, how: `${script} (#!/usr/bin/env ${name})` };
  }
  if (!isAbsolute(cmd)) return { ok: false, reason: `${script}'s #! line names a relative path: ${cmd}` };
  return { ok: true, python: cmd, how: `${script} (#!${cmd})` };
}

/** The first 512 bytes of a file, as text ('' when it cannot be read). */
export function fileHead(path: string): string {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Whether a path names a Python interpreter (python, python3, python3.11, pypy3, ...). */
export function looksLikePython(path: string): boolean {
  return /(^|\/)(python|pypy)[0-9.]*$/.test(path);
}

/** The probe's run: its answer, or why there is none. */
export type ProbeRun =
  | {
      ok: true;
      result: ProbeResult;
      ms: number /** When the answer is remembered (probe-cache.ts). */;
      cachedAt?: number;
    }
  | { ok: false; reason: string; ms: number };

/**
 * Runs the probe in `python` (argument array, no shell), bounded in time and in its process group (a child it
 * leaves holding its output never holds zerowiz; `signal` ends it: ../proc/bounded.ts); never throws.
 */
export async function runProbe(
  python: string,
  req: ProbeRequest,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ProbeRun> {
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? probeTimeoutMs(env);
  const r = await runBounded(python, ['-c', PROBE_SOURCE, JSON.stringify(req)], {
    env: { ...env, PYTHONDONTWRITEBYTECODE: '1' },
    cwd: opts.cwd,
    timeoutMs,
    signal: opts.signal,
  });
  const tail = r.stderr.slice(-STDERR_KEEP_CHARS).trim();
  if (r.error?.code === 'ENOENT') return { ok: false, reason: `${python} does not exist`, ms: ms() };
  if (r.error) return { ok: false, reason: `${python} could not be run: ${r.error.message.split('\n')[0]}`, ms: ms() };
  if (r.aborted) return { ok: false, reason: 'the run was stopped while the probe ran', ms: ms() };
  if (r.timedOut) return { ok: false, reason: `${python} did not answer within ${timeoutMs / 1000} s`, ms: ms() };
  if (r.code !== 0)
    return {
      ok: false,
      reason: `${python} exited with ${r.code ?? r.signal}${tail ? `: ${lastLine(tail)}` : ''}`,
      ms: ms(),
    };
  const answer = parseProbeAnswer(r.stdout);
  if ('problem' in answer) return { ok: false, reason: `${python}: ${answer.problem}`, ms: ms() };
  return { ok: true, result: answer.result, ms: ms() };
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines[lines.length - 1] ?? '';
}
