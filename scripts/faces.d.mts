// Types of faces.mjs, for the tests that bundle a module of src/ as the bin does.
import type { Plugin } from 'esbuild';

/** The esbuild plugin: the project's own TypeScript, with its face imports resolved to the defining modules. */
export function facesPlugin(root: string): Plugin;
/** Every face of the tree: its path, and for each name it exports the module that defines it. */
export function readFaces(root: string): Map<string, Map<string, { file: string; name: string }>>;
/** A source file's imports of faces, each named value imported from its own module instead. */
export function throughFaces(
  text: string,
  fromFile: string,
  faces: Map<string, Map<string, { file: string; name: string }>>,
): string;
