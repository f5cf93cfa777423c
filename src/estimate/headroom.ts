/**
 * The estimate's headroom defaults, in a module of their own: `zerowiz estimate --help` names them, and the command
 * line loads this, not the estimator, when it starts.
 */

/** DeepSpeed's default `additional_buffer_factor` (applied to CPU memory only). */
export const ADDITIONAL_BUFFER_FACTOR = 1.5;
/** Default GPU headroom: this percentage of each GPU is kept free beyond the modelled peak. */
export const DEFAULT_HEADROOM_PERCENT = 10;
/** CPU headroom kept free for the OS, the data loader and page cache: this fraction of CPU memory. */
export const CPU_HEADROOM_FRACTION = 0.1;
