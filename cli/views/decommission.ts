import type { Schemas } from '@drydock/client';
import { fields, table } from '../output';
import { nodeName } from './nodes';

/** `POST /v1/nodes/{id}/decommission/preview` (docs/lifecycle/decommission.md). */
export type DecommissionPreview = Schemas['DecommissionPreview'];

/** An identity as the operator must type it: quoted when it holds a space or a comma. */
const typed = (identity: string) => (/[\s,"]/.test(identity) ? JSON.stringify(identity) : identity);

/** The preview: what to type, what to present, what blocks, what goes and what stays. */
export function previewDetails(p: DecommissionPreview): string {
  const n = p.blockers.length;
  const head = fields([
    [
      'Node',
      `${nodeName({ id: p.nodeId, hostname: p.hostname })}${p.displayName ? ` ${typed(p.displayName)}` : ''}`,
    ],
    ['Confirm as', p.confirmationIdentities.map(typed).join(', ')],
    ['Generation', String(p.nodeGeneration)],
    ['Digest', p.dependencyDigest],
    ['Ready', p.ready ? 'yes' : `no: ${n} blocker${n === 1 ? '' : 's'}`],
  ]);
  const sections = [head];
  if (n > 0) sections.push(blockersTable(p.blockers));
  sections.push(
    table(
      ['CLEANUP', 'COUNT'],
      p.cleanup.map((c) => [c.kind, String(c.count)]),
    ),
    table(
      ['RETAINED', 'COUNT'],
      p.retained.map((r) => [r.kind, String(r.count)]),
    ),
  );
  return sections.join('\n\n');
}

/** The blockers an INVALID_STATE refusal lists in its details, one per line. */
export function blockersTable(blockers: DecommissionPreview['blockers']): string {
  return table(
    ['BLOCKER', 'ID', 'MESSAGE'],
    blockers.map((b) => [b.kind, b.id, b.message]),
  );
}
