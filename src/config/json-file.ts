/**
 * Reading a DeepSpeed JSON the way accelerate does: HfDeepSpeedConfig opens the file and calls Python's
 * `json.load`, which refuses comments, trailing commas and single quotes. A YAML parser would take such a file
 * and read something else (a `// stage 3, ...` comment line became keys, and the stage another number), so the
 * JSON is parsed as JSON, and a comment is named as the reason accelerate refuses the file. The parse is
 * bounded (../text/json.ts): a file nested deeper than any config is refused in one line, and a whole number
 * a float cannot hold exactly is refused by its key, never rewritten as another number.
 */
import { parseJsonBounded } from '../text/index.js';

/** The parsed value, or why accelerate's json.load would refuse the text. */
export type JsonParse = { ok: true; data: unknown } | { ok: false; problem: string };

/** The 1-based line of the first `//` or `/*` outside a string, or null. */
function commentLine(text: string): number | null {
  let line = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) return line;
  }
  return null;
}

/** Parses a DeepSpeed JSON's text as accelerate's json.load would. */
export function parseDeepSpeedJson(text: string): JsonParse {
  const parsed = parseJsonBounded(text);
  if (parsed.ok) return { ok: true, data: parsed.data };
  if (!parsed.syntax) return { ok: false, problem: parsed.problem };
  const line = commentLine(text);
  if (line !== null)
    return {
      ok: false,
      problem: `JSON does not allow comments (line ${line}); accelerate reads the file with json.load and refuses it`,
    };
  return {
    ok: false,
    problem: `it is not valid JSON (${parsed.problem}); accelerate reads the file with json.load and refuses it`,
  };
}
