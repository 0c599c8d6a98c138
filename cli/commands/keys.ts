import { parseDuration } from '../../domain/duration';
import { DEFAULT_ROTATION_GRACE_SECONDS, MAX_ROTATION_GRACE_SECONDS } from '../../domain/keys';
import { ACTIONS, type Action } from '../../domain/principal';
import { defineCommand, type Command } from '../command';
import { keyDetails, keysTable } from '../views/keys';
import { slugFlag } from './flags';

/** API keys (operator only): an operator key has no tenant; a tenant key holds a list of actions. */

const KEY = [{ name: 'ID', type: 'key' }] as const;

const create = defineCommand({
  words: ['keys', 'create'],
  summary: 'Create an API key; prints its secret, shown only this once',
  operands: [],
  flags: {
    name: {
      type: 'string',
      value: 'N',
      required: true,
      pattern: /^[a-z0-9][a-z0-9._-]{0,62}$/,
      patternHint: '1–63 of a-z 0-9 . _ -',
      help: 'what the key is for; recorded as the actor of what it does',
    },
    tenant: slugFlag('T', 'a tenant key of tenant T (needs --action); without it, an operator key'),
    action: {
      type: 'list',
      value: 'A,…',
      maxItems: ACTIONS.length,
      requires: 'tenant',
      checkItem: (item) =>
        (ACTIONS as readonly string[]).includes(item) ? undefined : `is not one of ${ACTIONS.join(', ')}`,
      help: 'the actions a tenant key may take, e.g. compute:nodes:read,compute:nodes:cordon',
    },
  },
  async run({ api, out, flags }) {
    const key = await api.POST('/v1/keys', {
      // The flag takes only the actions the API lists.
      body: { name: flags.name, tenantId: flags.tenant, actions: flags.action as Action[] | undefined },
    });
    out.result(key, () => keyDetails(key));
  },
});

const list = defineCommand({
  words: ['keys', 'list'],
  summary: 'List API keys (never their secrets), revoked and in a rotation grace too',
  operands: [],
  flags: {},
  async run({ api, out }) {
    const keys = await api.GET('/v1/keys');
    if (!out.json && keys.items.length === 0) {
      out.note('no API keys');
      return;
    }
    out.result(keys, () => keysTable(keys.items));
  },
});

/** Whole seconds of a `--grace` value within the API's bound, or null. */
function graceSeconds(value: string): number | null {
  const ms = parseDuration(value);
  if (ms === null || ms % 1000 !== 0 || ms / 1000 > MAX_ROTATION_GRACE_SECONDS) return null;
  return ms / 1000;
}

const rotate = defineCommand({
  words: ['keys', 'rotate'],
  summary:
    'Replace a key with a new one (same tenant and actions, new secret, shown once); the old secret works until the grace ends',
  operands: KEY,
  flags: {
    grace: {
      type: 'string',
      value: 'DURATION',
      maxLength: 16,
      accepts: (value) => graceSeconds(value) !== null,
      patternHint: `whole seconds up to ${MAX_ROTATION_GRACE_SECONDS / 86_400}d, such as 1h, 30m or 0 (refused at once)`,
      help: `how long the old secret stays accepted (default ${DEFAULT_ROTATION_GRACE_SECONDS / 3600}h; 0: not at all)`,
    },
  },
  async run({ api, out, args, flags }) {
    // `accepts` let only a value with grace seconds through.
    const body = flags.grace === undefined ? {} : { graceSeconds: graceSeconds(flags.grace)! };
    const key = await api.POST('/v1/keys/{id}/rotate', { params: { path: { id: args.ID } }, body });
    out.result(key, () => keyDetails(key));
  },
});

const revoke = defineCommand({
  words: ['keys', 'revoke'],
  summary: 'Revoke an API key: refused from the next request on (a rotation grace ends too)',
  operands: KEY,
  flags: {},
  async run({ api, out, args }) {
    const key = await api.DELETE('/v1/keys/{id}', { params: { path: { id: args.ID } } });
    out.result(key, () => `revoked ${key.id} (${key.name}) at ${key.revokedAt ?? '-'}`);
  },
});

export const keyCommands: Command[] = [create, list, rotate, revoke];
