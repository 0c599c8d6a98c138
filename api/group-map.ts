import { parseDocument } from 'yaml';
import { z } from 'zod';
import { DrydockError } from '../domain/errors';
import { ACTIONS, type Action } from '../domain/principal';

const GroupRule = z.discriminatedUnion('role', [
  z.object({ role: z.literal('operator') }).strict(),
  z
    .object({
      role: z.literal('tenant'),
      tenantId: z.string().min(1),
      actions: z.array(z.enum(ACTIONS)).min(1),
    })
    .strict(),
]);

const GroupMapFile = z
  .object({ groups: z.record(z.string().min(1), GroupRule) })
  .strict()
  .refine((file) => Object.keys(file.groups).length > 0, 'maps no group');

/** Provider group name → what a member of it is in Drydock (docs/sign-in.md, The group map). */
export type GroupMap = z.infer<typeof GroupMapFile>['groups'];

/** What a person's groups make them: an operator, or one tenant with the union of its grants. */
export type GroupRole = { role: 'operator' } | { role: 'tenant'; tenantId: string; actions: Action[] };

/**
 * The group map in `text` (YAML or JSON, `source` names it in errors); throws naming the line and
 * key of every problem.
 */
export function parseGroupMap(text: string, source: string): GroupMap {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new Error(`${source}: ${document.errors.map((e) => e.message).join('; ')}`);
  }
  const parsed = GroupMapFile.safeParse(document.toJS());
  if (parsed.success) return parsed.data.groups;
  const problems = parsed.error.issues.map((issue) => {
    const node = document.getIn(issue.path, true) as { range?: [number, number] } | undefined;
    const offset = node?.range?.[0] ?? findRange(document, issue.path);
    const line = offset === undefined ? '' : ` (line ${lineOf(text, offset)})`;
    const key = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
    return `${key}${line}: ${issue.message}`;
  });
  throw new Error(`${source}: ${problems.join('; ')}`);
}

/** The nearest enclosing node that has a position: an unknown key's parent, a missing key's map. */
function findRange(document: ReturnType<typeof parseDocument>, path: PropertyKey[]): number | undefined {
  for (let n = path.length - 1; n >= 0; n--) {
    const node = document.getIn(path.slice(0, n), true) as { range?: [number, number] } | undefined;
    if (node?.range) return node.range[0];
  }
  return undefined;
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}

/**
 * What `groups` make a person, by the map: any operator group makes an operator; otherwise the
 * tenant groups must all name one tenant, whose actions add up. Refused (403) with a reason: no
 * mapped group, or groups of several tenants (ambiguous: a request names no tenant to act as).
 */
export function roleOf(map: GroupMap, groups: readonly string[], who: string): GroupRole {
  const rules = groups.flatMap((group) => {
    const rule = Object.hasOwn(map, group) ? map[group] : undefined;
    return rule ? [{ group, rule }] : [];
  });
  if (rules.some(({ rule }) => rule.role === 'operator')) return { role: 'operator' };
  if (rules.length === 0) {
    throw new DrydockError(
      'FORBIDDEN',
      `${who} is signed in but in no group Drydock maps to a role (groups: ${groups.join(', ') || 'none'}); ask an operator to add one of them to the group map`,
      { groups: [...groups] },
    );
  }
  const tenants = [...new Set(rules.map(({ rule }) => (rule.role === 'tenant' ? rule.tenantId : '')))];
  if (tenants.length > 1) {
    throw new DrydockError(
      'FORBIDDEN',
      `${who} is in groups of several tenants (${tenants.join(', ')}): a person acts for one tenant; ask an operator to fix the group map or the membership`,
      { tenants },
    );
  }
  const actions = new Set(rules.flatMap(({ rule }) => (rule.role === 'tenant' ? rule.actions : [])));
  return { role: 'tenant', tenantId: tenants[0]!, actions: ACTIONS.filter((a) => actions.has(a)) };
}
