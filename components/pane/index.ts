/** The face of components/pane/: what other folders may use of it (an architecture test holds every import to it). */

export { runLogPane } from './run.js';
