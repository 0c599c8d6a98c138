import { parseDuration } from '../../domain/duration';
import { defineCommand, type Command } from '../command';
import { UsageError } from '../errors';
import { AUDIT_HEADER, auditLine } from '../views/audit';
import { FOLLOW_WAIT_S } from './events';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** A time in the past as `--since 24h` or `--since 2026-12-05T03:00:00Z` names it; null when neither. */
export function pastTime(text: string, now: number): string | null {
  const ago = parseDuration(text);
  if (ago !== null) return new Date(now - ago).toISOString();
  return RFC3339.test(text) && !Number.isNaN(Date.parse(text)) ? text : null;
}

const timeFlag = (help: string) =>
  ({
    type: 'string',
    value: 'WHEN',
    maxLength: 64,
    accepts: (value: string) => pastTime(value, Date.now()) !== null,
    patternHint: 'a duration ago such as 24h or 90m, or an RFC 3339 time such as 2026-12-05T03:00:00Z',
    help,
  }) as const;

const audit = defineCommand({
  words: ['audit'],
  summary:
    'Who did what, when and why (operators): newest first; --follow prints new entries oldest first until Ctrl-C',
  operands: [],
  flags: {
    actor: {
      type: 'string',
      value: 'ACTOR',
      pattern: /^[\x21-\x2B\x2D-\x7E]{1,200}$/,
      patternHint: 'an actor such as key:ops, node:node_…, system:drain, or a person: alice@example.com',
      help: 'only what ACTOR did, exactly (key:ops, node:…, system:drain); a person by email: alice@example.com',
    },
    type: {
      type: 'string',
      value: 'PREFIX',
      pattern: /^[a-z][a-z0-9.-]{0,99}(,[a-z][a-z0-9.-]{0,99}){0,9}$/,
      patternHint: 'an event type prefix such as node. or node.drain',
      help: 'only events whose type starts with PREFIX (node., node.drain), or with one of several: node.,security.',
    },
    since: timeFlag('only entries from WHEN on: 24h (ago) or 2026-12-05T03:00:00Z'),
    until: timeFlag('only entries before WHEN: 1h (ago) or 2026-12-05T04:00:00Z'),
    limit: { type: 'integer', value: 'N', min: 1, max: 200, default: '50', help: 'at most N entries' },
    cursor: {
      type: 'string',
      value: 'CURSOR',
      pattern: /^\d{1,15}$/,
      patternHint: 'the cursor a previous run printed',
      help: 'entries older than CURSOR (the next page of a previous run)',
    },
    follow: {
      type: 'boolean',
      help: 'print entries oldest first as they come (from --since, else from now), until Ctrl-C',
    },
  },
  async run({ api, out, flags }) {
    const now = Date.now();
    const filters = {
      actor: flags.actor,
      type: flags.type,
      since: flags.since === undefined ? undefined : pastTime(flags.since, now)!,
      until: flags.until === undefined ? undefined : pastTime(flags.until, now)!,
    };
    if (flags.follow && (flags.until !== undefined || flags.cursor !== undefined)) {
      throw new UsageError('--follow waits for new entries: it takes no --until or --cursor');
    }
    out.human(AUDIT_HEADER);
    if (!flags.follow) {
      const page = await api.GET('/v1/audit', {
        params: { query: { ...filters, cursor: flags.cursor, limit: flags.limit } },
      });
      for (const entry of page.items) out.line(entry, () => auditLine(entry));
      if (page.nextCursor) out.note(`older entries: pass --cursor ${page.nextCursor}`);
      return;
    }
    // From --since: every entry since then, then the new ones. Without it: from now.
    let after =
      filters.since === undefined
        ? (await api.GET('/v1/audit', { params: { query: { after: '0', limit: 0 } } })).nextCursor!
        : '0';
    for (;;) {
      const page = await api.GET('/v1/audit', {
        params: { query: { ...filters, after, limit: 200, wait: FOLLOW_WAIT_S } },
      });
      for (const entry of page.items) out.line(entry, () => auditLine(entry));
      after = page.nextCursor!;
    }
  },
});

export const auditCommands: Command[] = [audit];
