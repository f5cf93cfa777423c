/** The face of src/report/: what other folders may use of it (an architecture test holds every import to it). */
export { REPORT_FILE, buildReport, reportPathOf, writeReportTo, writeRunReport } from './build.js';
export { gatherReport } from './data.js';
export type { ReportData } from './data.js';
export { readSeries } from './read-series.js';
export type { SeriesData } from './read-series.js';
export { GPU_FILE, LOSSES_FILE, PROGRESS_FILE, SeriesRecorder, gpuWindowMs } from './series.js';
