/** The face of src/pane/: what other folders may use of it (an architecture test holds every import to it). */
export { FrameStats, LOG_FRAME_INTERVAL_MS } from './frames.js';
export { parseKeys } from './keys.js';
export { paneCommand, paneStack } from './keytable.js';
export { RunModel } from './model.js';
export { initialPaneState, paneReducer } from './state.js';
export type { PaneAction, PaneCommand, PaneState } from './state.js';
export { alertListLength, paneLayout, paneLines } from './view.js';
export type { PaneLayout, PaneLive } from './view.js';
