import { ARTIFACT_ID } from '../domain/artifacts';
import { parseDuration } from '../domain/duration';
import { isId, SLUG_PATTERN } from '../domain/ids';
import { CONDITION_TYPE } from '../domain/remediation';
import type { FlagSpec, FlagSpecs, FlagValues, Operand } from './spec';
import { UsageError } from './usage-error';

/** Flags as given: a value, `true` for a boolean, every value of a repeatable list. */
export type RawFlags = Map<string, string | true | string[]>;

const ulidForm = (prefix: string) => `look like ${prefix}_ followed by 26 lowercase ULID characters`;

/** What each kind of operand must look like, said when it does not. */
export const OPERAND_FORMS: Record<Operand['type'], { test(value: string): boolean; form: string }> = {
  node: { test: (value) => isId('node', value), form: ulidForm('node') },
  op: { test: (value) => isId('op', value), form: ulidForm('op') },
  pool: { test: (value) => SLUG_PATTERN.test(value), form: 'be 1–63 of a-z 0-9 -, starting with a letter' },
  token: { test: (value) => isId('jt', value), form: ulidForm('jt') },
  key: { test: (value) => isId('key', value), form: ulidForm('key') },
  condition: {
    test: (value) => CONDITION_TYPE.test(value),
    form: 'be a condition type such as GpuXidError: a letter, then letters and digits',
  },
  action: {
    test: (value) => SLUG_PATTERN.test(value),
    form: 'be an action name: 1–63 of a-z 0-9 -, starting with a letter',
  },
  command: { test: (value) => isId('cmd', value), form: ulidForm('cmd') },
  artifact: {
    test: (value) => ARTIFACT_ID.test(value),
    form: 'be an artifact id: 1–128 of letters, digits and . _ : -, starting with a letter or digit',
  },
};

export function checkOperands(operands: readonly Operand[], positionals: string[]): Record<string, string> {
  const args: Record<string, string> = {};
  operands.forEach((operand, index) => {
    const value = positionals[index];
    if (value === undefined) throw new UsageError(`missing ${operand.name}`);
    const { test, form } = OPERAND_FORMS[operand.type];
    if (!test(value)) throw new UsageError(`${operand.name} must ${form}, got '${value}'`);
    args[operand.name] = value;
  });
  const extra = positionals.slice(operands.length);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  return args;
}

export function checkFlags<F extends FlagSpecs>(specs: F, raw: RawFlags): FlagValues<F> {
  const flags: Record<string, string | string[] | number | boolean | undefined> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = raw.get(name);
    if (spec.requires && value !== undefined && !raw.has(spec.requires)) {
      throw new UsageError(`--${name} needs --${spec.requires}`);
    }
    if (value === undefined && spec.required) {
      throw new UsageError(`missing --${name}${spec.type === 'boolean' ? '' : ` ${spec.value}`}`);
    }
    flags[name] =
      spec.type === 'boolean'
        ? value === true
        : value === undefined
          ? undefined
          : Array.isArray(value) && spec.type === 'list'
            ? checkList(name, spec, value)
            : checkValue(name, spec, String(value));
  }
  return flags as FlagValues<F>;
}

/** One flag value, converted to what its handler gets. */
export function checkValue(
  name: string,
  spec: FlagSpec,
  value: string,
): string | string[] | number | boolean {
  switch (spec.type) {
    case 'boolean':
      return true;
    case 'string':
      if (value === '') throw new UsageError(`--${name} must not be empty`);
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}; got '${value}'`);
      }
      if ((spec.pattern && !spec.pattern.test(value)) || (spec.accepts && !spec.accepts(value))) {
        throw new UsageError(
          `--${name} must be ${spec.patternHint ?? `like ${spec.pattern}`}; got '${value}'`,
        );
      }
      if (spec.maxLength !== undefined && value.length > spec.maxLength) {
        throw new UsageError(`--${name} is at most ${spec.maxLength} characters`);
      }
      return value;
    case 'list':
      return checkList(name, spec, [value]);
    case 'integer': {
      const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
      if (Number.isNaN(n) || n < spec.min || (spec.max !== undefined && n > spec.max)) {
        throw new UsageError(`--${name} must be a whole number ${integerRange(spec)}; got '${value}'`);
      }
      return n;
    }
    case 'duration': {
      const ms = parseDuration(value);
      if (ms === null || ms <= 0 || (spec.min !== undefined && ms < spec.min)) {
        const least = spec.min === undefined ? '' : `of at least ${spec.min}ms, `;
        throw new UsageError(`--${name} must be a duration ${least}such as 90s, 10m or 2h; got '${value}'`);
      }
      return ms;
    }
  }
}

/** `≥ 1` or `0–1000000`: the whole numbers an integer flag takes. */
export const integerRange = (spec: Extract<FlagSpec, { type: 'integer' }>) =>
  spec.max === undefined ? `≥ ${spec.min}` : `${spec.min}–${spec.max}`;

/** The items of every value a list flag was given (comma-separated, trimmed, unless whole): distinct, checked. */
function checkList(
  name: string,
  spec: Extract<FlagSpec, { type: 'list' }>,
  values: readonly string[],
): string[] {
  const items: string[] = [];
  for (const value of values) {
    if (value.trim() === '') throw new UsageError(`--${name} must not be empty`);
    if (spec.whole) {
      items.push(value);
      continue;
    }
    const split = value.split(',').map((item) => item.trim());
    if (split.includes('')) throw new UsageError(`--${name} has an empty item in '${value}'`);
    items.push(...split);
  }
  const distinct = [...new Set(items)];
  if (distinct.length > spec.maxItems) {
    throw new UsageError(`--${name} takes at most ${spec.maxItems} items; got ${distinct.length}`);
  }
  for (const item of distinct) {
    const problem = spec.checkItem?.(item);
    if (problem) throw new UsageError(`--${name}: '${item}' ${problem}`);
  }
  return distinct;
}

/** A URL the binaries can send to: `http:` or `https:`. */
export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}
