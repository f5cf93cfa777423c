/** The ways forward of a relaunch over checkpoints of another topology (./relaunch.ts), light enough for `--help`. */

/** The ways forward, as `--on-topology-change` takes them. */
export const TOPOLOGY_CHOICES = ['convert', 'weights', 'fresh', 'go-on'] as const;
export type TopologyChoice = (typeof TOPOLOGY_CHOICES)[number];

/** One line per choice, for the question and `--help`. */
export const TOPOLOGY_CHOICE_TEXT: Readonly<Record<TopologyChoice, string>> = {
  convert: 'convert each checkpoint with ds_to_universal as a first pass, then resume with load_universal',
  weights: 'run zero_to_fp32 only (fp32 weights, no optimizer state), to start fresh from them',
  fresh: 'move the old checkpoints aside (nothing is deleted) and start from scratch',
  'go-on': 'launch as it is (the resume will most likely fail); the run record keeps the warning',
};

/** Whether `text` is a choice. */
export function isTopologyChoice(text: string): text is TopologyChoice {
  return (TOPOLOGY_CHOICES as readonly string[]).includes(text);
}
