/**
 * The `deepspeed-ops` check: each op the mode needs (cpu_adam for an offloaded optimizer, async_io for NVMe,
 * fused_adam for a JSON Adam on the GPU) is prebuilt into the installed DeepSpeed, or DeepSpeed can build it
 * at the first step: op_builder's compatibility (libaio for async_io), ninja, a C++ compiler, and for a GPU
 * build CUDA_HOME with an nvcc that matches torch's CUDA (DeepSpeed's own assert_no_cuda_mismatch). What
 * `ds_report` knows, asked of the real package by probe.ts; judged here.
 */
import { shellJoin } from '../text/index.js';
import type { CheckPlan, OpNeed } from './plan.js';
import type { ProbeOp, ProbeResult } from './probe.js';
import { pipInstall } from './python.js';
import { type CheckResult, type CheckStatus, failed, passed, skipped, warned } from './types.js';

/** One op's verdict. */
interface OpVerdict {
  status: CheckStatus;
  text: string;
  fix: string | null;
}

/** The package a builder's libaio message asks for, as DeepSpeed's check_for_libaio_pkg names it. */
function libaioFix(log: string): string {
  if (/libaio-devel/.test(log)) return 'sudo yum install libaio-devel';
  if (/pacman/.test(log)) return 'sudo pacman -S libaio';
  return 'sudo apt install libaio-dev (Debian/Ubuntu; libaio-devel with yum), or set CFLAGS and LDFLAGS to where libaio.h and libaio.so are';
}

/** The builder's own reasons, as one line (its [WARNING] lines, colour codes dropped). */
export function builderReasons(log: string): string {
  return log
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\[WARNING\]\s*/, '').trim())
    .filter((l) => l !== '' && !/^(gcc|cc|c\+\+|x86_64-linux-gnu-gcc)\b/.test(l))
    .slice(0, 3)
    .join(' ');
}

function judgeOp(op: OpNeed, o: ProbeOp | undefined, probe: ProbeResult): OpVerdict {
  const py = probe.python.executable;
  const t = probe.torch;
  const d = probe.deepspeed!;
  if (!o)
    return {
      status: 'fail',
      text: `${op.name}: DeepSpeed did not say (${d.error ?? 'no answer'})`,
      fix: `run \`ds_report\` in that environment to see why; reinstall with ${pipInstall(py, ['--force-reinstall', 'deepspeed'])}`,
    };
  if (o.installed) {
    const built = d.torchInfo?.version ?? null;
    const now = (probe.packages.torch.version ?? '').split('.').slice(0, 2).join('.');
    if (built && built !== '0.0' && now && built !== now)
      return {
        status: 'fail',
        text: `${op.name} is prebuilt, for torch ${built}; torch here is ${probe.packages.torch.version} (DeepSpeed raises "PyTorch version mismatch" when it loads)`,
        fix: `${shellJoin(['env', `DS_BUILD_${op.name.toUpperCase()}=1`, py, '-m', 'pip', 'install', '--force-reinstall', '--no-cache-dir', 'deepspeed'])}`,
      };
    return { status: 'pass', text: `${op.name} prebuilt (installed_ops)`, fix: null };
  }
  if (o.compatible === false) {
    const why = builderReasons(o.log);
    return {
      status: 'fail',
      text: `${op.name} is not prebuilt and op_builder says it cannot be built here${why ? `: ${why}` : ''}`,
      fix: op.name === 'async_io' ? libaioFix(o.log) : `see \`ds_report\` for ${op.name}`,
    };
  }
  const gpuBuild = t?.cudaAvailable === true;
  const lacks: string[] = [];
  const fixes: string[] = [];
  if (t?.ninja === false) {
    lacks.push('ninja is missing');
    fixes.push(pipInstall(py, ['ninja']));
  }
  if (t && t.cxx === null) {
    lacks.push(`no C++ compiler (${t.cxxName}) on PATH`);
    fixes.push('sudo apt install g++ (or set CXX)');
  }
  if (gpuBuild && o.cudaProblem) {
    lacks.push(`DeepSpeed's CUDA check: ${o.cudaProblem}`);
    fixes.push(
      /CUDA_HOME|Unable to run/.test(o.cudaProblem)
        ? `install the CUDA toolkit ${t?.cuda ?? ''} (its nvcc) and set CUDA_HOME to it`
        : `install the CUDA toolkit ${t?.cuda ?? ''} and point CUDA_HOME at it (DS_SKIP_CUDA_CHECK=1 skips the check, at your own risk)`,
    );
  }
  if (lacks.length > 0)
    return {
      status: 'fail',
      text: `${op.name} is not prebuilt, so DeepSpeed compiles it at the first step (JIT), and ${lacks.join('; ')}`,
      fix: fixes.join('; '),
    };
  return {
    status: 'pass',
    text: `${op.name} is not prebuilt: DeepSpeed compiles it at the first step (a few minutes; ninja, ${t?.cxxName ?? 'c++'}${gpuBuild ? `, nvcc in ${t?.cudaHome}` : ''} are here)`,
    fix: null,
  };
}

/** Judges the ops of the plan against the probe's answer. */
export function judgeOps(plan: CheckPlan, probe: ProbeResult | null): CheckResult {
  const id = 'deepspeed-ops';
  if (plan.ops.length === 0)
    return passed(
      id,
      plan.deepspeed ? `${plan.modeLabel} needs no op DeepSpeed compiles` : 'no pass runs DeepSpeed',
      'none',
    );
  const need = plan.ops.map((o) => `${o.name} (${o.why})`).join('; ');
  if (!probe?.deepspeed) return skipped(id, 'not checked: deepspeed could not be imported (see python)', need);
  const verdicts = plan.ops.map((op) => judgeOp(op, probe.deepspeed!.ops[op.name], probe));
  const text = verdicts.map((v) => v.text).join('; ');
  const fixes = verdicts.filter((v) => v.fix !== null).map((v) => v.fix!);
  if (verdicts.some((v) => v.status === 'fail')) return failed(id, text, need, fixes.join('; '));
  if (verdicts.some((v) => v.status === 'warn')) return warned(id, text, need, fixes.join('; '));
  return passed(id, text, need);
}
