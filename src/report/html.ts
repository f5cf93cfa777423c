/**
 * The report's page: one self-contained HTML file. No script at all, no font, image, style sheet or frame to
 * fetch, and a Content-Security-Policy that forbids every load but its own inline styles, so it opens from a
 * file in any browser, offline, and sends nothing anywhere. Every text from the run goes through esc
 * (./escape.ts). Light and dark follow the reader's system; each plot is drawn twice (wide, and narrow for a
 * phone) and the page shows the one that fits.
 */
import { SOURCE_LABELS, showValue, type ExplainedValue, type StepExplanation } from '../explain/index.js';
import { formatDuration, formatGiB } from '../text/index.js';
import { chartsOf, type Chart } from './charts.js';
import type { ReportData } from './data.js';
import { esc, escLines } from './escape.js';
import { summaryOf, type ReportSummary } from './summary.js';

declare const ZEROWIZ_VERSION: string | undefined;

/** The wide drawing's width: the page's column. */
export const WIDE_PLOT_PX = 880;
/** The narrow drawing's width: a phone's screen. */
export const NARROW_PLOT_PX = 350;

/** What the page forbids: everything but its inline styles. */
export const REPORT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--area:#fff;--grid:#e8ecf0;
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--run:#0969da;--idle:#8c959f;--band:rgba(9,105,218,.10);--range:rgba(89,99,110,.22);
--on:#fff;--c0:#0072b2;--c1:#d55e00;--c2:#009e73;--c3:#cc79a7;--c4:#3b8ec2;--c5:#b07d00;--c6:#5d4f9e;--c7:#8c564b}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--line:#3d444d;--panel:#151b23;--area:#0d1117;
--grid:#232a33;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--run:#4493f8;--idle:#6e7681;--band:rgba(68,147,248,.16);--range:rgba(157,167,179,.25);
--on:#0d1117;--c0:#56b4e9;--c1:#ff8c42;--c2:#2ec4a0;--c3:#e69ac8;--c4:#8fb8de;--c5:#f0c050;--c6:#b4a7f0;--c7:#d3a27f}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif}
main{max-width:960px;margin:0 auto;padding:28px 20px 56px}
h1{font-size:26px;line-height:1.25;margin:4px 0 6px;overflow-wrap:anywhere}
h2{font-size:19px;margin:36px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:20px 0 4px}
p{margin:6px 0}
.kicker{color:var(--muted);font-size:13px;letter-spacing:.05em;text-transform:uppercase;margin:0}
.meta{color:var(--muted);font-size:14px;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:14px;font-weight:600;padding:2px 10px;border-radius:999px;vertical-align:middle;color:#fff}
.badge.succeeded{background:#1a7f37}.badge.failed{background:#cf222e}.badge.interrupted{background:#9a6700}.badge.running{background:#0969da}
.why{border-left:4px solid var(--bad);background:var(--panel);padding:8px 12px;margin:14px 0;overflow-wrap:anywhere}
.why.interrupted{border-color:var(--warn)}.why.running{border-color:var(--run)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;background:var(--panel);min-width:0}
.card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.card .s{font-size:13px;color:var(--muted)}
.good{color:var(--ok)}.high{color:var(--bad)}.warn{color:var(--warn)}
figure{margin:14px 0 26px}
figure h3{margin:0 0 4px}
figcaption{color:var(--muted);font-size:13px;margin-top:2px}
figcaption .note{display:block}
svg.plot{display:block;width:100%;height:auto}
.narrow{display:none}
@media (max-width:700px){.wide{display:none}.narrow{display:block}main{padding:18px 14px 40px}h1{font-size:22px}}
svg.plot text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;fill:var(--muted)}
svg.plot .axis-title{fill:var(--fg);font-weight:600}
svg.plot .missing{fill:var(--muted);font-size:14px}
svg.plot .area{fill:var(--area);stroke:var(--line)}
svg.plot .grid{stroke:var(--grid);stroke-width:1}
svg.plot polyline,svg.plot path.nonfinite,svg.plot path.clipped{fill:none;stroke-linejoin:round;stroke-linecap:round}
svg.plot .raw{stroke:var(--muted);stroke-width:1;opacity:.75}
svg.plot .smooth{stroke:var(--c0);stroke-width:2.4}
svg.plot .range{fill:var(--range);stroke:none}
svg.plot .nonfinite{stroke:var(--bad);stroke-width:2}
svg.plot .clipped{stroke:var(--warn);stroke-width:2}
svg.plot .line{stroke-width:1.8}
svg.plot .band{fill:var(--band);stroke:none}
svg.plot .estimate{stroke:var(--run);stroke-width:1.5;stroke-dasharray:6 4}
svg.plot .total{stroke:var(--muted);stroke-width:1.2;stroke-dasharray:2 3}
svg.plot .bar.ok{fill:var(--ok)}svg.plot .bar.bad{fill:var(--bad)}svg.plot .bar.run{fill:var(--run)}svg.plot .bar.idle{fill:var(--idle)}
svg.plot .bar-label{fill:var(--on);font-weight:600}svg.plot .beside{fill:var(--fg)}
svg.plot .alert circle{stroke:var(--bg);stroke-width:1.5}
svg.plot .alert.fatal circle{fill:var(--bad)}svg.plot .alert.warn circle{fill:var(--warn)}
svg.plot .alert text{fill:var(--on);font-size:11px;font-weight:700}
svg.plot .ckpt.ok{fill:var(--ok)}svg.plot .ckpt.bad{fill:var(--bad)}
${[0, 1, 2, 3, 4, 5, 6, 7].map((k) => `svg.plot .c${k}{stroke:var(--c${k})}svg.plot .range.c${k}{fill:var(--c${k});opacity:.18}.sw.c${k}{background:var(--c${k})}`).join('')}
.key{white-space:nowrap;color:var(--fg)}
.sw{display:inline-block;width:.85em;height:.85em;border-radius:2px;margin-right:.3em;vertical-align:-.08em}
.scroll{overflow-x:auto;margin:8px 0}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
th{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em;font-weight:600;white-space:nowrap}
td.nm{white-space:nowrap}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
code,pre{font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px 12px;white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0;max-height:480px;overflow-y:auto}
details{margin:8px 0}summary{cursor:pointer;font-weight:600;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}
.status-done{color:var(--ok)}.status-failed,.status-stopped{color:var(--bad)}.status-running{color:var(--run)}.status-pending{color:var(--muted)}
ul.notes{color:var(--muted);font-size:14px;padding-left:20px}
footer{color:var(--muted);font-size:13px;margin-top:40px;border-top:1px solid var(--line);padding-top:10px}
`;

/** A date as the page says it (UTC, to the second). */
function when(ms: number | null): string {
  if (ms === null) return '-';
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** A loss as the page says it. */
function lossText(v: number): string {
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : Number(v.toPrecision(5)).toString();
}

function gib(bytes: number): string {
  return formatGiB(bytes);
}

function card(k: string, v: string, s = '', cls = ''): string {
  return `<div class="card"><div class="k">${esc(k)}</div><div class="v${cls ? ` ${cls}` : ''}">${esc(v)}</div>${s ? `<div class="s">${esc(s)}</div>` : ''}</div>`;
}

/** The header: the setup's name, how it ended, when and where. */
function header(d: ReportData): string {
  const j = d.json;
  const host = j.supervisor?.host ?? null;
  const meta = [
    `run ${j.id}`,
    host ? `on ${host}` : null,
    `started ${when(d.t0)}`,
    j.endedAt ? `ended ${when(Date.parse(j.endedAt))}` : null,
    `launched as ${j.source}`,
  ].filter((x): x is string => x !== null);
  return `<header><p class="kicker">zerowiz run report</p><h1>${esc(j.name)} <span class="badge ${esc(j.ended)}">${esc(j.ended)}</span></h1><p class="meta">${meta.map(esc).join(' · ')}</p></header>`;
}

/** The summary cards and why the run ended. */
function summarySection(d: ReportData, s: ReportSummary): string {
  const cards: string[] = [];
  const from = s.lossPass ? `pass ${s.lossPass}` : '';
  cards.push(
    s.finalLoss
      ? card('final loss', lossText(s.finalLoss.value), `at step ${s.finalLoss.step} · ${from}`)
      : card('final loss', '—', 'no loss was read'),
  );
  if (s.bestLoss) cards.push(card('best loss', lossText(s.bestLoss.value), `at step ${s.bestLoss.step}`));
  cards.push(
    s.steps
      ? card(
          'steps',
          s.steps.done.toLocaleString('en-US'),
          s.steps.total !== null ? `of ${s.steps.total.toLocaleString('en-US')}` : from,
        )
      : card('steps', '—', 'not known'),
  );
  cards.push(card('wall time', formatDuration(s.wallMs), d.json.ended === 'running' ? 'so far' : ''));
  cards.push(
    s.gpuHours !== null
      ? card(
          'GPU-hours',
          s.gpuHours < 10 ? s.gpuHours.toFixed(2) : s.gpuHours.toFixed(1),
          `${d.gpus} GPU(s) × the passes' time`,
        )
      : card('GPU-hours', '—', 'the setup is unreadable'),
  );
  cards.push(...peakCards(d, s));
  const why = s.why ? `<p class="why ${esc(s.ended)}"><strong>Why it ended:</strong> ${esc(s.why)}</p>` : '';
  return `<section aria-label="summary">${why}<div class="cards">${cards.join('')}</div></section>`;
}

function peakCards(d: ReportData, s: ReportSummary): string[] {
  if (s.peaks.length === 0) {
    const reason = d.passes.map((p) => p.live?.gpu.reason).find((r) => r);
    return [card('GPU peak', '—', reason ?? 'no GPU telemetry')];
  }
  const top = [...s.peaks].sort((a, b) => b.usedBytes - a.usedBytes)[0]!;
  const out = [peakCard(top, d, true)];
  if (s.peaks.length <= 8) for (const p of s.peaks) if (p !== top) out.push(peakCard(p, d, false));
  return out;
}

function peakCard(p: ReportSummary['peaks'][number], d: ReportData, highest: boolean): string {
  const vs = p.vsEstimate;
  const pct = vs === null ? '' : `${vs >= 0 ? '+' : ''}${Math.round(vs * 100)}% vs estimated ${gib(d.estimate!.bytes)}`;
  const cls = vs === null ? '' : vs > 0.25 ? 'high' : vs < -0.25 ? 'warn' : 'good';
  return card(
    `${highest ? 'highest peak · ' : ''}GPU ${p.gpu}`,
    gib(p.usedBytes),
    pct || (p.totalBytes ? `of ${gib(p.totalBytes)}` : ''),
    cls,
  );
}

/** A chart, drawn wide and narrow, with its title, caption and notes. */
function figure(c: Chart): string {
  const wide = c.draw(WIDE_PLOT_PX);
  const narrow = c.draw(NARROW_PLOT_PX);
  const notes = [...new Set(wide.notes)].map((n) => `<span class="note">${esc(n)}</span>`).join('');
  return `<figure id="${esc(c.id)}"><h3>${esc(c.title)}</h3><div class="wide">${wide.svg}</div><div class="narrow">${narrow.svg}</div><figcaption>${c.captionHtml}${notes}</figcaption></figure>`;
}

function lossSection(d: ReportData, charts: Chart[]): string {
  const missing = d.passes
    .filter((p) => !d.series.losses.has(p.index))
    .map(
      (p) =>
        `pass ${p.index + 1} ${p.name}: no loss${p.noLossHint ? ` (${p.noLossHint.replace(/^none: /, '')})` : ' was read'}`,
    );
  const none =
    d.series.files['losses.csv']?.present === false
      ? [
          'this run has no losses.csv: it was recorded by a zerowiz without series, or by a Slurm job whose batch node could not run zerowiz (its job-watch.log says why)',
        ]
      : [];
  const notes = [...none, ...missing];
  return `<section><h2>Loss</h2>${charts.map(figure).join('')}${notes.length > 0 ? `<ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}</section>`;
}

function alertsSection(d: ReportData): string {
  if (d.alerts.length === 0) return `<section><h2>Alerts</h2><p>No alert was raised.</p></section>`;
  const rows = d.alerts.map(
    (a, k) =>
      `<tr><td class="num">${k + 1}</td><td class="num">${esc(formatDuration(a.at - d.t0))}</td><td class="nm">${esc(d.passes[a.pass]?.name ?? String(a.pass + 1))}</td><td><strong class="${a.fatal ? 'high' : 'warn'}">${esc(a.title)}</strong><br>fix: ${esc(a.fix)}<br><code>${esc(a.line)}</code></td></tr>`,
  );
  return `<section><h2>Alerts</h2><div class="scroll"><table><thead><tr><th>#</th><th>after</th><th>pass</th><th>what, and the fix</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></section>`;
}

function checkpointsSection(d: ReportData): string {
  if (d.checkpoints.length === 0)
    return `<section><h2>Checkpoints</h2><p>No checkpoint was found in the passes' output folders.</p></section>`;
  const rows = d.checkpoints.map(
    (c) =>
      `<tr><td class="num">${c.at === null ? '-' : esc(formatDuration(Math.max(0, c.at - d.t0)))}</td><td class="${c.verdict === 'ok' ? 'good' : 'high'}">${c.verdict === 'ok' ? 'verified' : 'BAD'}</td><td><code>${esc(c.path)}</code><br>${esc(c.reason)}</td></tr>`,
  );
  return `<section><h2>Checkpoints</h2><div class="scroll"><table><thead><tr><th>after</th><th>verdict</th><th>where, and why</th></tr></thead><tbody>${rows.join('')}</tbody></table></div></section>`;
}

function failureSection(d: ReportData): string {
  const f = d.failure;
  if (!f) return '';
  const body =
    f.lines.length > 0 ? `<pre>${escLines(f.lines.join('\n'))}</pre>` : '<p>Its log is empty or could not be read.</p>';
  return `<section><h2>The end of ${esc(f.pass)}'s log</h2>${body}</section>`;
}

/** The setup's headline answers. */
function setupLine(d: ReportData): string {
  const a = d.setup?.answers;
  if (!a) return `<p>The setup in run.json cannot be read back${d.setupProblem ? `: ${esc(d.setupProblem)}` : ''}.</p>`;
  const facts = [
    `ZeRO ${a.mode}`,
    `${a.num_processes} process(es) on ${a.num_machines} machine(s)`,
    `mixed precision ${a.mixed_precision}`,
    `gradient accumulation ${a.gradient_accumulation_steps}`,
  ];
  if (a.model_name) facts.unshift(`model ${a.model_name}`);
  return `<p>${facts.map(esc).join(' · ')}</p>`;
}

function passesTable(d: ReportData): string {
  const rows = d.passes.map((p) => {
    const took = p.startedAt !== null && p.endedAt !== null ? formatDuration(p.endedAt - p.startedAt) : '-';
    const extra = [p.error, p.warning]
      .filter((x): x is string => !!x)
      .map((x) => `<br>${esc(x)}`)
      .join('');
    return `<tr><td class="num">${p.index + 1}</td><td>${esc(p.name)}</td><td class="status-${esc(p.status)}">${esc(p.status)}${p.exitCode !== null ? ` (exit ${p.exitCode})` : ''}${extra}</td><td class="num">${esc(took)}</td></tr><tr><td></td><td colspan="3"><pre>${escLines(p.command)}</pre></td></tr>`;
  });
  return `<div class="scroll"><table><thead><tr><th>#</th><th>pass</th><th>how it ended</th><th>took</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function valueRow(v: ExplainedValue): string {
  const src = SOURCE_LABELS[v.source] ?? v.source;
  return `<tr><td><code>${esc(v.key)}</code></td><td><code>${esc(showValue(v.value))}</code></td><td>${esc(v.where ? `${src}: ${v.where}` : src)}</td></tr>`;
}

function explainStep(s: StepExplanation, open: boolean): string {
  const cfg =
    s.config.kind === 'none'
      ? 'no accelerate config'
      : `${s.config.kind === 'default' ? "accelerate's default config " : 'config '}${s.config.path ?? ''}`;
  const head = `${s.name} · ${cfg}${s.config.json ? ` · DeepSpeed JSON ${s.config.json}` : ''}${s.deepspeed ? '' : ' · without DeepSpeed'}`;
  const problems = [...s.errors.map((e) => `error: ${e}`), ...s.warnings.map((w) => `warning: ${w}`)];
  return `<details${open ? ' open' : ''}><summary>${esc(head)}</summary>${problems.length > 0 ? `<ul class="notes">${problems.map((p) => `<li>${esc(p)}</li>`).join('')}</ul>` : ''}<div class="scroll"><table><thead><tr><th>key</th><th>value</th><th>from</th></tr></thead><tbody>${s.values.map(valueRow).join('')}</tbody></table></div></details>`;
}

function whatRanSection(d: ReportData): string {
  const ex = d.explain;
  const values = ex
    ? ex.steps.map((s, i) => explainStep(s, i === ex.steps.findIndex((x) => x.deepspeed))).join('')
    : `<p>The effective values could not be worked out${d.explainProblem ? `: ${esc(d.explainProblem)}` : ''}.</p>`;
  const files = d.configFiles
    .map(
      (f) =>
        `<details><summary>${esc(f.path)}</summary>${f.text === null ? '<p>Its copy in the run directory cannot be read.</p>' : `<pre>${escLines(f.text)}</pre>${f.cut ? '<p class="meta">(only its first 64 KiB)</p>' : ''}`}</details>`,
    )
    .join('');
  return `<section><h2>What ran</h2>${setupLine(d)}${passesTable(d)}<h3>Effective values, and where each came from</h3><p class="meta">As <code>zerowiz explain</code> works them out for this setup, step by step.</p>${values}<h3>The config files, as the run used them</h3>${files || '<p>None were copied.</p>'}</section>`;
}

/** What the report was drawn from, and what it lacks. */
function aboutSection(d: ReportData): string {
  const notes: string[] = [];
  for (const [name, f] of Object.entries(d.series.files)) {
    if (!f.present) notes.push(`${name}: not in the run directory`);
    else
      notes.push(
        `${name}: ${f.rows.toLocaleString('en-US')} rows${f.bad > 0 ? `, ${f.bad.toLocaleString('en-US')} left out (not what the header says)` : ''}${f.cut ? ', read only to its first 128 MiB' : ''}`,
      );
  }
  return `<section><h2>About this report</h2><p>Drawn from the run directory <code>${esc(d.dir)}</code>: run.json, the series zerowiz kept while the run went, the step logs and the config copies.</p><ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>`;
}

/** The whole page. */
export function reportHtml(d: ReportData): string {
  const s = summaryOf(d);
  const charts = chartsOf(d);
  const version = typeof ZEROWIZ_VERSION === 'string' ? ZEROWIZ_VERSION : 'dev';
  const body = [
    header(d),
    summarySection(d, s),
    lossSection(d, charts.loss),
    `<section><h2>Over time</h2>${charts.time.map(figure).join('')}</section>`,
    alertsSection(d),
    checkpointsSection(d),
    failureSection(d),
    whatRanSection(d),
    aboutSection(d),
    `<footer>Made by zerowiz ${esc(version)} on ${esc(when(d.generatedAt))}. One file: no script, nothing loaded from anywhere.</footer>`,
  ].join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(`${d.json.name} · ${d.json.ended} · zerowiz report`)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}
