/**
 * A pgbench script made from what one real request sent: the baseline of an API benchmark runs the
 * very statements the API's driver sent, captured as it sent them (postgres.js' `debug` hook: text
 * and parameters), not a hand-written copy that could drift from the code.
 */

/** One statement as the driver sent it. */
export interface SentStatement {
  sql: string;
  params: unknown[];
}

/** The statements of one request, and the node it changed. */
export interface CapturedCall {
  nodeId: string;
  statements: SentStatement[];
}

export interface ReplayScript {
  /** The script, for `pgbench -f`, in the query mode of the statements it replays (`-M`). */
  script: string;
  /** The captured parameter values, for `pgbench -D name=value`: passed as parameters, not as text. */
  variables: Record<string, string>;
  /** How many statements each replayed request sent. */
  statementsPerCall: number[];
}

/**
 * Replays `calls` (one, or two that share their first statements and then part on a boolean
 * column of the node: `branch` names it, the first call is its `false` side, the second its
 * `true` side) on the node `pick` chooses. Each statement keeps its text; its parameters become:
 *  - the node id: in the first statement that names it (the row lock), a subquery that reads node
 *    `:n` of `table` (pgbench has no text variables of its own), whose row `\gset` keeps (`:id`,
 *    `:version`, and every other column); in the others `:id`;
 *  - the version a statement sets (`"version" = $k`): `:version + 1`, one past the locked row's;
 *  - anything else: the value the request sent, as a `-D` variable.
 * So a transaction does what the request did, to another node each time.
 */
export function replayScript(input: {
  calls: [CapturedCall] | [CapturedCall, CapturedCall];
  branch?: string;
  /** pgbench lines that set `:n` (a 1-based row of `table`). */
  pick: string[];
  table: string;
}): ReplayScript {
  const variables: Record<string, string> = {};
  const [first, second] = input.calls;
  if (second && !input.branch) throw new Error('two calls need the column they part on');
  const shared = second ? sharedPrefix(first.statements, second.statements) : first.statements.length;
  let locked = false;
  const render = (call: CapturedCall, index: number, prefix: string): string => {
    const statement = call.statements[index]!;
    const text = statement.sql.replace(/\s+/g, ' ').trim();
    if (/^(begin|commit)$/i.test(text)) return `${text.toUpperCase()};`;
    const setsVersion = new Set([...text.matchAll(/"version" = \$(\d+)/g)].map((m) => Number(m[1])));
    let lockHere = false;
    const replaced = text.replace(/\$(\d+)\b/g, (_, k: string) => {
      const value = statement.params[Number(k) - 1];
      if (value === call.nodeId) {
        if (locked) return ':id';
        lockHere = true;
        return `(SELECT id FROM ${input.table} WHERE n = :n)`;
      }
      if (setsVersion.has(Number(k))) return ':version + 1';
      if (value === null || value === undefined) return 'NULL';
      const name = `${prefix}s${index}p${k}`;
      variables[name] = String(value);
      return `:${name}`;
    });
    if (lockHere) {
      locked = true;
      return `${replaced} \\gset`;
    }
    return `${replaced};`;
  };
  const lines = [...input.pick];
  for (let i = 0; i < shared; i++) lines.push(render(first, i, 'a'));
  if (second) {
    if (!locked) throw new Error('the two calls part before they lock their node');
    lines.push(`\\if :${input.branch}`);
    for (let i = shared; i < second.statements.length; i++) lines.push(render(second, i, 'b'));
    lines.push('\\else');
    for (let i = shared; i < first.statements.length; i++) lines.push(render(first, i, 'a'));
    lines.push('\\endif');
  }
  if (!locked) throw new Error('the captured request never named its node');
  return {
    script: `${lines.join('\n')}\n`,
    variables,
    statementsPerCall: input.calls.map((call) => call.statements.length),
  };
}

/** How many leading statements two calls share, by text (the first call's parameters are replayed). */
function sharedPrefix(a: SentStatement[], b: SentStatement[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i]!.sql === b[i]!.sql) i++;
  return i;
}
