import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { parseDuration } from '../domain/duration';
import { UsageError } from './usage-error';

// What a program's `--config FILE` (YAML) shares, whichever program reads it (the agent, a bridge).

/** A duration setting (`30s`, `2m`, `1h`) as milliseconds; `fallback` when the key is absent. */
export const durationSetting = (fallback?: string) => {
  const text = z.string({ error: 'must be a duration such as 30s, 2m or 1h' });
  return (fallback === undefined ? text : text.default(fallback)).transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === null || ms <= 0) {
      ctx.addIssue({ code: 'custom', message: `must be a duration such as 30s, 2m or 1h; got '${value}'` });
      return z.NEVER;
    }
    return ms;
  });
};

/** Reads `--config FILE` as YAML (an empty file is `{}`); a usage error when it cannot. */
export function readYamlConfig(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--config ${file}: cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    return parse(text) ?? {};
  } catch (error) {
    throw new UsageError(`--config ${file}: not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** One issue as `path: problem`, the path in dots (`actions.reboot.timeout`). */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const at = path.length > 0 ? `${path.join('.')}.` : '';
    return issue.keys.map((key) => `${at}${key}: unknown key`).join('; ');
  }
  return `${path.length > 0 ? path.join('.') : 'the file'}: ${issue.message}`;
}
