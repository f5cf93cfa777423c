/** The face of src/fs/: what other folders may use of it (an architecture test holds every import to it). */
export { expandPath, expandPathAnswer, expandWord, pathFlag, processContext } from './expand.js';
export type { ExpandContext } from './expand.js';
export { accelerateDefaultConfig, cacheHome, presetsDir, userPresetsDir } from './paths.js';
export { parseDataFile } from './data-file.js';
export { openOwnedFile, parseYamlQuietly, pathPresent, readOwnedFile, readUserFile } from './read.js';
export type { FileProblem, OwnedFile } from './read.js';
export {
  PRIVATE_DIR_MODE,
  PRIVATE_EXEC_MODE,
  PRIVATE_FILE_MODE,
  UntrustedPathError,
  ensurePrivateDir,
  listDir,
  lstatOrNull,
  mkdirPrivate,
  ownedByMe,
  pinnedDir,
  unpinDir,
  unlinkIfMine,
  untrustedDirProblem,
  userName,
  writePrivateFile,
} from './safe-fs.js';
export { Tail, readFirstBytes, readLastBytes } from './tail.js';
export { formatWrite, moveAside, withDirLocks, writeFileSafely, writeFilesTogether } from './write.js';
export type { FileToSave, FileToWrite, WriteResult } from './write.js';
