/** The model catalog (presets/models.yaml): parameter counts and largest layers of public models. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import * as z from 'zod/mini';
import './zod.js';
import { UsageError } from './errors.js';
import { presetsDir } from './paths.js';

const positiveInt = z.int().check(z.positive());

const ModelSchema = z
  .strictObject({
    id: z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]*$/, 'lower-case id of letters, digits, dots and dashes')),
    name: z.string().check(z.minLength(1)),
    params: positiveInt,
    largest_layer: positiveInt,
    layers: z.optional(positiveInt),
    hidden: z.optional(positiveInt),
    heads: z.optional(positiveInt),
    source: z.string().check(z.minLength(1)),
  })
  .check(z.refine((m) => m.largest_layer <= m.params, { message: 'largest_layer cannot exceed params' }));

const CatalogSchema = z.strictObject({ models: z.array(ModelSchema).check(z.minLength(1)) });

/** One catalog entry. */
export interface ModelEntry {
  id: string;
  name: string;
  params: number;
  largestLayer: number;
  /** Transformer blocks, hidden size and heads for the activation estimate, when the model has that shape. */
  layers: number | null;
  hidden: number | null;
  heads: number | null;
  /** Where the figures come from and how they were derived. */
  source: string;
}

/** Parses and validates catalog YAML text; throws UsageError naming the bad field. */
export function parseModelCatalog(text: string, file = 'models.yaml'): ModelEntry[] {
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw new UsageError(
      `${file} is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  const result = CatalogSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue ? issue.path.join('.') : '';
    throw new UsageError(`${file}: ${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'}`);
  }
  const ids = new Set<string>();
  return result.data.models.map((m) => {
    if (ids.has(m.id)) throw new UsageError(`${file}: duplicate model id '${m.id}'`);
    ids.add(m.id);
    return {
      id: m.id,
      name: m.name,
      params: m.params,
      largestLayer: m.largest_layer,
      layers: m.layers ?? null,
      hidden: m.hidden ?? null,
      heads: m.heads ?? null,
      source: m.source,
    };
  });
}

let cached: ModelEntry[] | undefined;

/** The built-in catalog (read once). */
export function loadModelCatalog(file: string = join(presetsDir(), 'models.yaml')): ModelEntry[] {
  if (file === join(presetsDir(), 'models.yaml') && cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(
      `the model catalog ${file} cannot be read`,
      'reinstall zerowiz, or give --params and --largest-layer',
    );
  }
  const models = parseModelCatalog(text, file);
  if (file === join(presetsDir(), 'models.yaml')) cached = models;
  return models;
}

/** Looks a model up by id or name (case-insensitive); UsageError listing the ids otherwise. */
export function findModel(query: string, models: ModelEntry[] = loadModelCatalog()): ModelEntry {
  const q = query.trim().toLowerCase();
  const hit = models.find((m) => m.id === q || m.name.toLowerCase() === q);
  if (!hit) throw new UsageError(`unknown model '${query}'`, `choose one of: ${models.map((m) => m.id).join(', ')}`);
  return hit;
}
