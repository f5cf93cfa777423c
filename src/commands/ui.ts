/**
 * The terminal views live in components/ (the wizard in Ink; the launch log pane draws its own rows,
 * see docs/design/dependencies.md) and are loaded lazily by the bin (bin/zerowiz.ts), so src/ never imports ink or react and
 * the plain commands never pay for loading them.
 */

/** Options of the interactive wizard. */
export interface WizardOptions {
  /** `zerowiz --config FILE`: an accelerate YAML to import on start. */
  configPath?: string;
}

/** The views the CLI can mount. Each resolves with the process exit code. */
export interface UiLoaders {
  runWizard(opts: WizardOptions): Promise<number>;
  /** Mounts the launch log pane over a started pipeline (see src/launch/). */
  runLogPane(opts: import('../launch/viewer.js').LogPaneOptions): Promise<number>;
}
