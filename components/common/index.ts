/** The face of components/common/: what other folders may use of it (an architecture test holds every import to it). */
export { KeyDispatcher, KeyRouter, useKeyHold, useRawKeys, useSurface } from './keys.js';
export { List, moreMark } from './List.js';
export { TextField } from './TextField.js';
export { COLOR_ENABLED, PALETTE, PICTURE_PALETTE, tint } from './theme.js';
export { useTerminalSize } from './useTerminalSize.js';
