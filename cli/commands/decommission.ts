import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isId } from '../../domain/ids';
import { ApiError } from '@drydock/client';
import { defineCommand, type Command } from '../command';
import { CliError, UsageError } from '../errors';
import { blockersTable, previewDetails, type DecommissionPreview } from '../views/decommission';
import type { Operation } from '../views/operations';
import { reportFinished, waitForOperation } from '../wait';
import { idempotencyKeyFlag, reasonFlag, timeoutFlag, waitFlag } from './flags';

/** Decommission (docs/lifecycle/decommission.md): a read-only preview, then an execute presenting it. */

const NODE = [{ name: 'NODE', type: 'node' }] as const;

const DIGEST = /^sha256:[0-9a-f]{64}$/;

const preview = defineCommand({
  words: ['decommission', 'preview'],
  summary: 'What a decommission would do and what blocks it (changes nothing); exit 3 unless ready',
  operands: NODE,
  flags: {},
  async run({ api, out, args }) {
    const p = await api.POST('/v1/nodes/{id}/decommission/preview', { params: { path: { id: args.NODE } } });
    out.result(p, () => previewDetails(p));
    if (!p.ready) {
      const kinds = [...new Set(p.blockers.map((b) => b.kind))].join(', ');
      const n = p.blockers.length;
      // Exit 3, as execute would be refused now.
      throw new CliError(
        'INVALID_STATE',
        `not ready: ${n} blocker${n === 1 ? ' remains' : 's remain'} (${kinds}); resolve them, then preview again`,
      );
    }
    if (!out.json) {
      out.note(
        `ready: drydock decommission execute ${p.nodeId} --generation ${p.nodeGeneration} ` +
          `--digest ${p.dependencyDigest} --confirm IDENTITY --operator O --reason R`,
      );
    }
  },
});

/** The body of `POST /v1/nodes/{id}/decommission`. */
export interface ExecuteBody {
  confirm: string;
  nodeGeneration: number;
  dependencyDigest: string;
  operator: string;
  reason: string;
}

/**
 * The `Idempotency-Key` of an execute given none: a hash of the node and the whole body, so the
 * same command line run again (after a network failure) is the same request, answered with the
 * operation the first one started, while any other body gets a key of its own.
 */
export function derivedIdempotencyKey(nodeId: string, body: ExecuteBody): string {
  const parts = [
    nodeId,
    body.nodeGeneration,
    body.dependencyDigest,
    body.confirm,
    body.operator,
    body.reason,
  ];
  return `dd-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32)}`;
}

/**
 * The generation, digest and identities of a preview saved by `decommission preview --json`;
 * a file that is not one, or is the preview of another node, is a usage error (nothing is sent).
 */
export function readPreviewFile(
  path: string,
  nodeId: string,
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): Pick<DecommissionPreview, 'nodeGeneration' | 'dependencyDigest' | 'confirmationIdentities'> {
  const refuse = (problem: string) =>
    new UsageError(`--from-preview ${path} ${problem}`, 'decommission execute');
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw refuse(`cannot be read${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const p = parsed as Partial<Record<keyof DecommissionPreview, unknown>> | undefined;
  const saved = `is not a preview saved by: drydock decommission preview ${nodeId} --json`;
  if (!p || typeof p !== 'object' || typeof p.nodeId !== 'string' || !isId('node', p.nodeId)) {
    throw refuse(saved);
  }
  if (p.nodeId !== nodeId) throw refuse(`is the preview of ${p.nodeId}, not of ${nodeId}`);
  const { nodeGeneration, dependencyDigest, confirmationIdentities } = p;
  if (
    typeof nodeGeneration !== 'number' ||
    !Number.isInteger(nodeGeneration) ||
    nodeGeneration < 1 ||
    typeof dependencyDigest !== 'string' ||
    !DIGEST.test(dependencyDigest) ||
    !Array.isArray(confirmationIdentities) ||
    !confirmationIdentities.every((i) => typeof i === 'string')
  ) {
    throw refuse(saved);
  }
  return { nodeGeneration, dependencyDigest, confirmationIdentities };
}

const execute = defineCommand({
  words: ['decommission', 'execute'],
  summary: 'Decommission a node for good, presenting its preview; there is no undo',
  operands: NODE,
  flags: {
    confirm: {
      type: 'string',
      value: 'IDENTITY',
      required: true,
      maxLength: 256,
      help: "the node's id, hostname or display name, typed exactly as the preview shows it",
    },
    generation: { type: 'integer', value: 'G', min: 1, help: "the preview's nodeGeneration" },
    digest: {
      type: 'string',
      value: 'D',
      pattern: DIGEST,
      patternHint: "the preview's dependencyDigest, sha256: and 64 hex digits",
      help: "the preview's dependencyDigest",
    },
    'from-preview': {
      type: 'string',
      value: 'FILE',
      help: 'take the generation and digest from FILE, saved by decommission preview NODE --json',
    },
    operator: {
      type: 'string',
      value: 'O',
      required: true,
      maxLength: 128,
      help: 'who owns the change (≤ 128 characters; stored on the event)',
    },
    reason: { ...reasonFlag, required: true },
    'idempotency-key': {
      ...idempotencyKeyFlag,
      help: `${idempotencyKeyFlag.help}; without it, one derived from the node and the other flags`,
    },
    wait: waitFlag,
    timeout: timeoutFlag,
  },
  check({ flags }) {
    const { generation, digest } = flags;
    if (flags['from-preview'] !== undefined) {
      if (generation !== undefined || digest !== undefined) {
        throw new UsageError('give --from-preview FILE or --generation G with --digest D, not both');
      }
      return;
    }
    if (generation === undefined && digest === undefined) {
      throw new UsageError("give the preview's --generation G and --digest D, or --from-preview FILE");
    }
    if (generation === undefined) throw new UsageError('--digest needs --generation');
    if (digest === undefined) throw new UsageError('--generation needs --digest');
  },
  async run({ api, out, args, flags }) {
    const nodeId = args.NODE;
    let nodeGeneration = flags.generation;
    let dependencyDigest = flags.digest;
    const file = flags['from-preview'];
    if (file !== undefined) {
      const saved = readPreviewFile(file, nodeId);
      if (!saved.confirmationIdentities.includes(flags.confirm)) {
        throw new UsageError(
          `--confirm '${flags.confirm}' is not one of the identities in ${file}: ` +
            `${saved.confirmationIdentities.join(', ')} (type one exactly)`,
          'decommission execute',
        );
      }
      ({ nodeGeneration, dependencyDigest } = saved);
    }
    const body: ExecuteBody = {
      confirm: flags.confirm,
      nodeGeneration: nodeGeneration!,
      dependencyDigest: dependencyDigest!,
      operator: flags.operator,
      reason: flags.reason,
    };
    const key = flags['idempotency-key'] ?? derivedIdempotencyKey(nodeId, body);
    let operation: Operation;
    try {
      operation = await api.POST('/v1/nodes/{id}/decommission', {
        params: { path: { id: nodeId }, header: { 'idempotency-key': key } },
        body,
      });
    } catch (error) {
      if (error instanceof ApiError) explainRefusal(error, nodeId, (text) => out.note(text));
      throw error;
    }
    if (!flags.wait) {
      out.result(operation, () => `${nodeId}: decommission ${operation.id} ${operation.status} (key ${key})`);
      return;
    }
    const ongoing = operation.status === 'pending' || operation.status === 'running';
    if (!out.json && ongoing)
      out.note(`${nodeId}: decommission ${operation.id} ${operation.status}; waiting`);
    return reportFinished(out, await waitForOperation(api, out, operation, flags.timeout));
  },
});

/** What the operator does next after a refused execute, on stderr before the error line. */
function explainRefusal(error: ApiError, nodeId: string, note: (text: string) => void): void {
  const blockers = error.details.blockers;
  if (error.code === 'INVALID_STATE' && Array.isArray(blockers) && blockers.length > 0) {
    note(blockersTable(blockers as DecommissionPreview['blockers']));
  }
  if (error.code === 'CONFLICT' || error.code === 'INVALID_STATE') {
    note(`preview again: drydock decommission preview ${nodeId}`);
  }
}

export const decommissionCommands: Command[] = [preview, execute];
