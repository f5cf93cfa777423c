/**
 * The wizard's flow as a pure reducer: which screen is shown, which question is current, what the user
 * has answered. No ink, no react: the views in components/wizard/ render this state and dispatch actions.
 *
 * The user's own answers (`given`) are kept apart from the defaults; the full answers are always derived
 * with `withDefaults(given, env)`, so a default that depends on an earlier answer (or on detection that
 * arrives late) follows it until the user answers that question.
 */
import {
  QUESTIONS,
  activeQuestions,
  withDefaults,
  type Answers,
  type DetectedEnv,
  type Question,
  type QuestionId,
} from '../config/index.js';
import { DEFAULT_FILES, dropKeptFor, UNNAMED_SETUP, type LaunchStep, type Setup } from '../config/index.js';
import { MODE_INFO } from '../config/index.js';

/** The screens of the wizard. */
export type Screen = 'start' | 'question' | 'review' | 'finish';

/** Where the current setup came from. */
export type Origin = { kind: 'new' } | { kind: 'preset'; name: string } | { kind: 'import'; path: string };

/** Everything of a setup except its answers (files, steps, kept extra keys). */
export type SetupBase = Omit<Setup, 'answers'>;

/** The flow state. */
export interface FlowState {
  screen: Screen;
  /** What detection found (defaults for GPU count and memory). */
  env: DetectedEnv;
  /** The answers the user (or the preset/import) gave; everything else is a default. */
  given: Partial<Answers>;
  base: SetupBase;
  origin: Origin;
  /** The question shown on the question screen. */
  current: QuestionId;
  /** Question ids in the order they were answered during the walk (for "back"). */
  history: QuestionId[];
  /** True when the current question was opened from the review screen: answering returns there. */
  returnToReview: boolean;
  /**
   * Questions an answer changed from the review newly enabled (num_machines 1 -> 2 enables the
   * multi-node ones): walked, in catalog order, before going back to the review.
   */
  enabledFromReview: QuestionId[];
  /** True when answers changed since the start or the last write. */
  dirty: boolean;
}

/** What the views can ask the flow to do. */
export type FlowAction =
  | { type: 'start'; origin: Origin; given?: Partial<Answers>; base?: SetupBase; to?: 'questions' | 'review' }
  /** `also`: more answers the same choice gives (undefined: back to its default). */
  | { type: 'answer'; id: QuestionId; value: unknown; also?: Partial<Answers> }
  | { type: 'back' }
  | { type: 'jump'; id: QuestionId }
  | { type: 'review' }
  | { type: 'finish' }
  | { type: 'env'; env: DetectedEnv }
  /** The files were written; `base` is the setup as written (its files re-pointed at the target). */
  | { type: 'written'; base?: SetupBase }
  /** The launch steps changed (the steps editor). */
  | { type: 'steps'; steps: LaunchStep[] }
  | { type: 'toStart' };

/** A new setup's base: the default file names, no launch steps. */
export const NEW_BASE: SetupBase = { name: UNNAMED_SETUP, files: { ...DEFAULT_FILES }, steps: [] };

const FIRST_ID = QUESTIONS[0].id as QuestionId;

/** The state the wizard opens with. */
export function initialFlow(env: DetectedEnv): FlowState {
  return {
    screen: 'start',
    env,
    given: {},
    base: NEW_BASE,
    origin: { kind: 'new' },
    current: FIRST_ID,
    history: [],
    returnToReview: false,
    enabledFromReview: [],
    dirty: false,
  };
}

/** The full answers: given ones plus defaults. */
export function answersOf(s: Pick<FlowState, 'given' | 'env'>): Answers {
  return withDefaults(s.given, s.env);
}

/**
 * The answers a saved preset keeps: the user's, plus the machine facts the wizard detected that the step time
 * uses (the GPU links, the GPU, the host's cores), so `estimate --preset` and a launch elsewhere give the
 * wizard's step time (without --detect the CLI would assume PCIe, an A100 and 32 cores).
 */
export function presetGiven(s: Pick<FlowState, 'given' | 'env'>, answers: Answers = answersOf(s)): Partial<Answers> {
  const out: Partial<Answers> = { ...s.given };
  if (!('gpu_links' in s.given) && answers.gpu_links !== '') out.gpu_links = answers.gpu_links;
  if (!('gpu_model' in s.given) && answers.gpu_model !== '') out.gpu_model = answers.gpu_model;
  if (!('cpu_cores' in s.given) && answers.cpu_cores !== null) out.cpu_cores = answers.cpu_cores;
  return out;
}

/** The setup the answers describe. */
export function setupOf(s: FlowState, answers: Answers = answersOf(s)): Setup {
  return { ...s.base, answers };
}

/**
 * Questions the wizard answers on another question's screen: the ZeRO table has a row per offload
 * device, so choosing a row answers the offload device too. They stay editable from the review.
 */
const ANSWERED_WITH: ReadonlySet<QuestionId> = new Set<QuestionId>(['offload_device']);

/**
 * Questions `accelerate config` asks whatever the stage but that only do something at some stages: the walk
 * asks them there only (a newcomer at ZeRO-1 is not asked about ZeRO-3's zero.Init); the review lists them
 * always, so a value an import brought stays visible and changeable (its finding opens it).
 */
const WALKED_WHEN: Partial<Record<QuestionId, (a: Answers) => boolean>> = {
  zero3_init: (a) => MODE_INFO[a.mode].stage === 3,
};

/** The questions of the walk (active, not advanced, not answered on another screen, doing something here), in order. */
export function walkQuestions(a: Answers): Question[] {
  return activeQuestions(a, false).filter((x) => !ANSWERED_WITH.has(x.id) && (WALKED_WHEN[x.id]?.(a) ?? true));
}

const ORDER = new Map<QuestionId, number>(QUESTIONS.map((x, i) => [x.id as QuestionId, i]));
function indexOf(id: QuestionId): number {
  return ORDER.get(id) ?? -1;
}

/** The first walked question after `id` (in catalog order) whose condition holds, or null at the end. */
export function nextQuestion(id: QuestionId, a: Answers): QuestionId | null {
  const i = indexOf(id);
  return walkQuestions(a).find((x) => indexOf(x.id) > i)?.id ?? null;
}

/** The last walked question before `id` whose condition holds, or null at the start. */
export function previousQuestion(id: QuestionId, a: Answers): QuestionId | null {
  const i = indexOf(id);
  const before = walkQuestions(a).filter((x) => indexOf(x.id) < i);
  return before[before.length - 1]?.id ?? null;
}

/** "Question n of m" for the header: the position of `id` among the walked questions. */
export function progress(id: QuestionId, a: Answers, given?: Partial<Answers>): { index: number; total: number } {
  const walk = given ? fullestWalk(a, given) : walkQuestions(a);
  const idx = walk.findIndex((x) => x.id === id);
  return { index: idx < 0 ? walk.length : idx + 1, total: walk.length };
}

/**
 * Answers a question ahead may still give that open more questions: a model (its size opens the model's
 * questions) and an offloading ZeRO-3 (its JSON questions). Counted as given when not answered yet, so the
 * total does not jump as the walk goes (Q4/11, then Q5/18): it only falls when an answer closes questions.
 */
const OPENING_ANSWERS: readonly Partial<Answers>[] = [{ model_params: 1e9 }, { model_params: 1e9, mode: '3-offload' }];

/** The longest walk the answers not given yet could still open (see OPENING_ANSWERS). */
function fullestWalk(a: Answers, given: Partial<Answers>): Question[] {
  let best = walkQuestions(a);
  for (const open of OPENING_ANSWERS) {
    const missing = Object.fromEntries(Object.entries(open).filter(([k]) => !(k in given)));
    if (Object.keys(missing).length === 0) continue;
    const walk = walkQuestions({ ...a, ...missing });
    if (walk.length > best.length) best = walk;
  }
  return best;
}

function sameValue(x: unknown, y: unknown): boolean {
  return x === y || (Number.isNaN(x) && Number.isNaN(y));
}

/** The reducer. Never throws for a well-typed action; unknown ids are ignored. */
export function flowReducer(s: FlowState, action: FlowAction): FlowState {
  switch (action.type) {
    case 'start': {
      const given = { ...(action.given ?? {}) };
      const next: FlowState = {
        ...s,
        given,
        base: action.base ?? NEW_BASE,
        origin: action.origin,
        history: [],
        returnToReview: false,
        enabledFromReview: [],
        dirty: false,
      };
      if (action.to === 'review') return { ...next, screen: 'review' };
      const first = walkQuestions(answersOf(next))[0]?.id ?? FIRST_ID;
      return { ...next, screen: 'question', current: first };
    }
    case 'answer': {
      if (!ORDER.has(action.id)) return s;
      const before = answersOf(s);
      const given: Partial<Answers> = {
        ...s.given,
        ...(action.also ?? {}),
        [action.id]: action.value,
      } as Partial<Answers>;
      // An `also` entry of undefined takes that answer back to its default (a ZeRO row that ends a split).
      for (const [k, v] of Object.entries(action.also ?? {}))
        if (v === undefined) delete (given as Record<string, unknown>)[k];
      const after = withDefaults(given, s.env);
      const extra = dropKeptFor(s.base.extra, [action.id]);
      const keptDropped = extra !== s.base.extra;
      if (keptDropped) s = { ...s, base: { ...s.base, extra } };
      const changed = keptDropped || (Object.keys(after) as QuestionId[]).some((k) => !sameValue(before[k], after[k]));
      const dirty = s.dirty || changed;
      const history = [...s.history.filter((h) => h !== action.id), action.id];
      if (s.returnToReview) {
        // Questions this answer enabled come first (and those enabled earlier and still pending).
        const walkBefore = new Set(walkQuestions(before).map((x) => x.id));
        const pending = new Set([
          ...(s.enabledFromReview ?? []),
          ...walkQuestions(after)
            .map((x) => x.id as QuestionId)
            .filter((id) => !walkBefore.has(id)),
        ]);
        pending.delete(action.id);
        const todo = walkQuestions(after)
          .map((x) => x.id as QuestionId)
          .filter((id) => pending.has(id));
        const [first, ...rest] = todo;
        if (first !== undefined)
          return {
            ...s,
            given,
            dirty,
            history,
            screen: 'question',
            current: first,
            returnToReview: true,
            enabledFromReview: rest,
          };
        return { ...s, given, dirty, history, screen: 'review', returnToReview: false, enabledFromReview: [] };
      }
      const next = nextQuestion(action.id, after);
      if (next === null) return { ...s, given, dirty, history, screen: 'review', returnToReview: false };
      return { ...s, given, dirty, history, screen: 'question', current: next };
    }
    case 'back': {
      if (s.screen === 'finish') return { ...s, screen: 'review' };
      if (s.screen === 'review') {
        const a = answersOf(s);
        const walk = walkQuestions(a);
        const last = walk[walk.length - 1]?.id ?? FIRST_ID;
        return { ...s, screen: 'question', current: last, returnToReview: false };
      }
      if (s.screen === 'question') {
        if (s.returnToReview) return { ...s, screen: 'review', returnToReview: false, enabledFromReview: [] };
        const prev = previousQuestion(s.current, answersOf(s));
        if (prev === null) return { ...s, screen: 'start' };
        return { ...s, current: prev };
      }
      return s;
    }
    case 'jump': {
      if (!ORDER.has(action.id)) return s;
      return {
        ...s,
        screen: 'question',
        current: action.id,
        returnToReview: s.screen === 'review' || s.screen === 'finish' || s.returnToReview,
        enabledFromReview: [],
      };
    }
    case 'review':
      return { ...s, screen: 'review', returnToReview: false, enabledFromReview: [] };
    case 'finish':
      return { ...s, screen: 'finish', returnToReview: false, enabledFromReview: [] };
    case 'env':
      return { ...s, env: action.env };
    case 'written':
      return { ...s, dirty: false, base: action.base ?? s.base };
    case 'steps': {
      const same = JSON.stringify(action.steps) === JSON.stringify(s.base.steps);
      return same ? s : { ...s, base: { ...s.base, steps: action.steps }, dirty: true };
    }
    case 'toStart':
      return { ...s, screen: 'start', returnToReview: false };
  }
}
