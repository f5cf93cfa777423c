/** The face of components/wizard/: what other folders may use of it (an architecture test holds every import to it). */
export { runWizard } from './run.js';
