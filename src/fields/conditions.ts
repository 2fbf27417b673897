// Conditional form fields: a field is shown (and only then required and sealed) when tests on other fields hold.
// formWiringProblems refuses a form whose conditions and calculations name unknown fields or go round in a circle;
// shownFields says which fields are shown for given values. Pure code without Node, so that the browser can run it
// too; the request schema of a condition is in schemas.ts.

/** One test on another field (by its key). `filled`: it has any value; `equals`: its value is one of `values`; `notEquals`: it has a value and it is none of them. */
export type FieldTest = { field: string; is: 'filled' } | { field: string; is: 'empty' } | { field: string; is: 'equals' | 'notEquals'; values: string[] };
/** Shown when all tests pass (`all`) or any does (`any`); nesting allowed up to 3 levels: { any: [ { all: [...] }, test ] }. */
export type FieldCondition = FieldTest | { all: FieldCondition[] } | { any: FieldCondition[] };

export const MAX_DEPTH = 3;
export const MAX_TESTS = 20;
export const MAX_VALUES = 50;
export const KINDS = ['filled', 'empty', 'equals', 'notEquals'] as const;

/** A form's fields as this module sees them. `value` is what the field holds ('' / undefined / null = no value; checkbox 'true'/'false', where 'false' counts as empty for `filled`; a multi-select holds string[] and `equals` passes if any selected value is listed). */
export interface FormField {
  key: string;
  showWhen?: FieldCondition;
  /** keys a calculated field reads */
  reads?: string[];
}

type Values = Readonly<Record<string, string | string[] | null | undefined>>;

/** The keys a condition names, each once, in the order they appear. Iterative, as the condition may not have passed the schema. */
function namedKeys(condition: FieldCondition | undefined): string[] {
  const keys = new Set<string>();
  const pending: FieldCondition[] = condition ? [condition] : [];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if ('field' in next) keys.add(next.field);
    else pending.push(...[...('all' in next ? next.all : next.any)].reverse());
  }
  return [...keys];
}

// An edge A → B: A's condition or calculation names B, so B must be settled before A.
function edgesOf(fields: FormField[], known: Set<string>): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const field of fields) {
    if (edges.has(field.key)) continue;
    const targets = new Set([...namedKeys(field.showWhen), ...(field.reads ?? [])]);
    edges.set(
      field.key,
      [...targets].filter((target) => target !== field.key && known.has(target)),
    );
  }
  return edges;
}

function duplicateProblems(fields: FormField[]): string[] {
  const seen = new Set<string>();
  const duplicated = new Set<string>();
  for (const { key } of fields) (seen.has(key) ? duplicated : seen).add(key);
  return [...duplicated].map((key) => `the key "${key}" is used by more than one field`);
}

function referenceProblems(field: FormField, known: Set<string>): string[] {
  const problems: string[] = [];
  const check = (what: string, names: string[]) => {
    for (const name of new Set(names)) {
      if (name === field.key) problems.push(`the ${what} of "${field.key}" names "${name}" itself: a field cannot depend on its own value`);
      else if (!known.has(name)) problems.push(`the ${what} of "${field.key}" names "${name}", which is no field of this form`);
    }
  };
  check('condition', namedKeys(field.showWhen));
  check('calculation', field.reads ?? []);
  return problems;
}

/**
 * The strongly connected components of the graph with more than one field, by Tarjan's algorithm, with an
 * explicit stack rather than recursion so that a chain of thousands of fields cannot overflow the call stack.
 */
function circles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    // Each frame is a field and how many of its edges have been followed.
    const frames: { key: string; next: number }[] = [];
    const visit = (key: string) => {
      index.set(key, index.size);
      low.set(key, index.get(key)!);
      stack.push(key);
      onStack.add(key);
      frames.push({ key, next: 0 });
    };
    visit(root);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const target = edges.get(frame.key)![frame.next++];
      const lower = (key: string, than: number) => low.set(key, Math.min(low.get(key)!, than));
      if (target === undefined) {
        // All of this field's edges followed: it roots a component, or passes its low link to its parent.
        frames.pop();
        if (low.get(frame.key) === index.get(frame.key)) found.push(popComponent(stack, onStack, frame.key));
        if (frames.length > 0) lower(frames[frames.length - 1].key, low.get(frame.key)!);
      } else if (!index.has(target)) visit(target);
      else if (onStack.has(target)) lower(frame.key, index.get(target)!);
    }
  }
  return found.filter((component) => component.length > 1);
}

function popComponent(stack: string[], onStack: Set<string>, key: string): string[] {
  const component: string[] = [];
  let member: string;
  do {
    member = stack.pop()!;
    onStack.delete(member);
    component.push(member);
  } while (member !== key);
  return component;
}

/** One circle through `start` inside its component, the shortest (breadth first), as the keys in order from `start` back to it. */
function circleThrough(start: string, component: Set<string>, edges: Map<string, string[]>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    for (const target of edges.get(queue[head])!) {
      if (target === start) return [...pathTo(queue[head], cameFrom, start), start];
      if (!component.has(target) || cameFrom.has(target)) continue;
      cameFrom.set(target, queue[head]);
      queue.push(target);
    }
  }
  return [start]; // not reached: every member of a component lies on a circle
}

function pathTo(key: string, cameFrom: Map<string, string>, start: string): string[] {
  const path = [key];
  for (let at = key; at !== start;) path.push((at = cameFrom.get(at)!));
  return path.reverse();
}

function circleProblems(fields: FormField[], edges: Map<string, string[]>): string[] {
  const order = new Map<string, number>();
  fields.forEach(({ key }, position) => {
    if (!order.has(key)) order.set(key, position);
  });
  const first = (component: string[]) => component.reduce((a, b) => (order.get(a)! <= order.get(b)! ? a : b));
  return circles(edges)
    .map((component) => circleThrough(first(component), new Set(component), edges))
    .sort((a, b) => order.get(a[0])! - order.get(b[0])!)
    .map((circle) => `${circle.map((key) => `"${key}"`).join(' → ')}: conditions and calculations must not go round in a circle`);
}

/** Problems in a form's wiring, each naming the fields: conditions or calculations naming an unknown key ("the condition of \"B\" names \"Z\", which is no field of this form"); a field whose condition names itself; cycles through showWhen and reads edges together ("\"A\" → \"B\" → \"A\": conditions and calculations must not go round in a circle"), each cycle reported once; duplicate keys. Empty when fine. Deterministic order. */
export function formWiringProblems(fields: FormField[]): string[] {
  const known = new Set(fields.map(({ key }) => key));
  return [...duplicateProblems(fields), ...fields.flatMap((field) => referenceProblems(field, known)), ...circleProblems(fields, edgesOf(fields, known))];
}

// What a field holds as trimmed strings, blanks dropped. Only own properties count: a key such as "constructor"
// must not find Object.prototype's. Anything but a string or a list of strings holds nothing.
function held(values: Values, key: string): string[] {
  const value = Object.hasOwn(values, key) ? values[key] : undefined;
  const list: unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return list.flatMap((item) => (typeof item === 'string' && item.trim() !== '' ? [item.trim()] : []));
}

// Comparisons are exact, of trimmed strings: numbers as given, so "1.0" is not "1".
function passes(test: FieldTest, holds: string[]): boolean {
  if (test.is === 'filled' || test.is === 'empty') return holds.some((value) => value !== 'false') === (test.is === 'filled');
  const listed = new Set(test.values.map((value) => value.trim()));
  const matches = holds.some((value) => listed.has(value));
  return test.is === 'equals' ? matches : holds.length > 0 && !matches;
}

// Recursion is bounded by the nesting the schema allows (3 levels).
function holdsFor(condition: FieldCondition, valueOf: (key: string) => string[]): boolean {
  if ('all' in condition) return condition.all.every((part) => holdsFor(part, valueOf));
  if ('any' in condition) return condition.any.some((part) => holdsFor(part, valueOf));
  return passes(condition, valueOf(condition.field));
}

/** Which fields are shown, given the values: a field is shown when it has no condition, or its condition holds AND every field its condition names is itself shown (a hidden field counts as having no value). Assumes formWiringProblems was empty. */
export function shownFields(fields: FormField[], values: Values): Set<string> {
  const shown = new Set<string>();
  const valueOf = (key: string) => (shown.has(key) ? held(values, key) : []);
  for (const field of conditionOrder(fields)) {
    const names = namedKeys(field.showWhen);
    if (!field.showWhen || (names.every((name) => shown.has(name)) && holdsFor(field.showWhen, valueOf))) shown.add(field.key);
  }
  return shown;
}

/**
 * The fields with conditions after the fields they name (Kahn's algorithm), each once. A field on a circle or
 * naming an unknown key never comes (it stays hidden), and of two fields with one key only the first counts.
 */
function conditionOrder(fields: FormField[]): FormField[] {
  const byKey = new Map<string, FormField>();
  for (const field of fields) if (!byKey.has(field.key)) byKey.set(field.key, field);
  const waitingFor = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const field of byKey.values()) {
    const names = namedKeys(field.showWhen);
    waitingFor.set(field.key, names.length);
    for (const name of names) {
      if (!dependents.has(name)) dependents.set(name, []);
      dependents.get(name)!.push(field.key);
    }
  }
  const ready = [...byKey.values()].filter((field) => waitingFor.get(field.key) === 0);
  for (let head = 0; head < ready.length; head++) {
    for (const dependent of dependents.get(ready[head].key) ?? []) {
      const left = waitingFor.get(dependent)! - 1;
      waitingFor.set(dependent, left);
      if (left === 0) ready.push(byKey.get(dependent)!);
    }
  }
  return ready;
}
