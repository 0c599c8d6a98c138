import { LABEL_KEY, LABEL_VALUE, MAX_LABELS } from './labels';

/**
 * A label selector, `rack=b7,gpu.model=H100`: a node matches when it has every one of these labels
 * with exactly that value. The empty selector matches every node.
 */
export type Selector = Record<string, string>;

/** The selector a caller wrote, or why it is none (keys and values follow the label grammar). */
export function parseSelector(text: string): { selector: Selector } | { problem: string } {
  if (text === '') return { selector: {} };
  const terms = text.split(',');
  if (terms.length > MAX_LABELS) return { problem: `names at most ${MAX_LABELS} labels` };
  const selector: Selector = {};
  for (const term of terms) {
    const eq = term.indexOf('=');
    if (eq === -1) return { problem: `${JSON.stringify(term)} is not KEY=VALUE` };
    const key = term.slice(0, eq);
    const value = term.slice(eq + 1);
    if (!LABEL_KEY.test(key)) return { problem: `${JSON.stringify(key)} is not a label key` };
    if (!LABEL_VALUE.test(value)) return { problem: `${JSON.stringify(value)} is not a label value` };
    if (Object.hasOwn(selector, key)) return { problem: `names ${key} twice` };
    selector[key] = value;
  }
  return { selector };
}

/** The selector as written: `rack=b7,gpu.model=H100`, keys in order; `''` for every node. */
export function formatSelector(selector: Selector): string {
  return Object.keys(selector)
    .sort()
    .map((key) => `${key}=${selector[key]}`)
    .join(',');
}
