import { parseDuration } from '../../domain/duration';
import { MAX_LABELS } from '../../domain/labels';
import { defineCommand, type Command } from '../command';
import { tokenDetails, tokensTable } from '../views/tokens';
import { labelObject, labelPairsFlag, refuseRepeatedLabelKeys, slugFlag } from './flags';

/** Join tokens (docs/lifecycle/enrollment.md): nodes that join with one land in its pool, adopted. */

const create = defineCommand({
  words: ['token', 'create'],
  summary: 'Create a join token for a pool; prints its secret, shown only this once',
  operands: [],
  flags: {
    pool: { ...slugFlag('P', 'nodes that join with the token land in pool P'), required: true },
    tenant: slugFlag('T', "the pool's tenant; refused unless pool P belongs to T"),
    ttl: {
      type: 'string',
      value: 'DURATION',
      required: true,
      maxLength: 16,
      accepts: (value) => parseDuration(value) !== null,
      patternHint: 'a duration such as 24h, 30m or 0 (never expires)',
      help: 'the token expires after DURATION (24h, 30m); 0 never expires',
    },
    'max-uses': {
      type: 'integer',
      value: 'N',
      min: 0,
      max: 1_000_000,
      required: true,
      help: 'how many nodes may join with it; 0 is unlimited',
    },
    label: labelPairsFlag(
      `labels set on every node that joins, e.g. team=data (repeat or comma-separate; at most ${MAX_LABELS})`,
      true,
    ),
    description: {
      type: 'string',
      value: 'D',
      maxLength: 256,
      help: 'what the token is for (≤ 256 characters), shown by token list',
    },
  },
  check({ flags }) {
    refuseRepeatedLabelKeys('label', flags.label ?? []);
  },
  async run({ api, out, flags }) {
    const token = await api.POST('/v1/tokens', {
      body: {
        poolId: flags.pool,
        tenantId: flags.tenant,
        ttl: flags.ttl,
        maxUses: flags['max-uses'],
        labels: flags.label && labelObject(flags.label),
        description: flags.description,
      },
    });
    out.result(token, () => tokenDetails(token));
  },
});

const list = defineCommand({
  words: ['token', 'list'],
  summary: 'List join tokens (never their secrets) with their uses and expiry',
  operands: [],
  flags: {},
  async run({ api, out }) {
    const tokens = await api.GET('/v1/tokens');
    if (!out.json && tokens.items.length === 0) {
      out.note('no join tokens');
      return;
    }
    out.result(tokens, () => tokensTable(tokens.items));
  },
});

const revoke = defineCommand({
  words: ['token', 'revoke'],
  summary: 'Revoke a join token: new joins with it stop; nodes that joined stay',
  operands: [{ name: 'ID', type: 'token' }],
  flags: {},
  async run({ api, out, args }) {
    const token = await api.DELETE('/v1/tokens/{id}', { params: { path: { id: args.ID } } });
    out.result(token, () => `revoked ${token.id} (pool ${token.poolId}) at ${token.revokedAt ?? '-'}`);
  },
});

export const tokenCommands: Command[] = [create, list, revoke];
