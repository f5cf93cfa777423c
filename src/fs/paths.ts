/** Where zerowiz finds its data and keeps the user's files. */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { xdgConfig } from 'xdg-basedir';

/**
 * The built-in presets folder. The bundled bin sits in dist/ and the sources in src/, both one level
 * below the package root, so `../presets` works for both.
 */
export function presetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', 'presets'), join(here, '..', '..', 'presets')]) {
    if (existsSync(candidate)) return candidate;
  }
  return join(here, '..', 'presets');
}

/** User presets: `$XDG_CONFIG_HOME/zerowiz/presets`, default `~/.config/zerowiz/presets`. */
export function userPresetsDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : env === process.env
        ? (xdgConfig ?? join(homedir(), '.config'))
        : join(env.HOME ?? homedir(), '.config');
  return join(base, 'zerowiz', 'presets');
}

/** The user's cache folder: `$XDG_CACHE_HOME`, default `~/.cache` (zerowiz keeps its own under `zerowiz/`). */
export function cacheHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(env.HOME ?? homedir(), '.cache');
}

/**
 * accelerate's default config file: `$HF_HOME/accelerate/default_config.yaml`, else
 * `${XDG_CACHE_HOME:-~/.cache}/huggingface/accelerate/default_config.yaml`.
 */
export function accelerateDefaultConfig(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HOME) return join(env.HF_HOME, 'accelerate', 'default_config.yaml');
  return join(cacheHome(env), 'huggingface', 'accelerate', 'default_config.yaml');
}
