import { assertControllable } from '../../domain/controls';
import { actorOf, type Principal } from '../../domain/principal';
import type { SchedulerReport } from '../../domain/scheduler-view';
import { lockNode } from '../../db/nodes';
import { nodeNotFound } from '../../db/queries/nodes';
import type { SchedulerViewRow } from '../../db/queries/scheduler-views';
import { reportAndRemediate } from '../../db/requests/remediation';
import { recordSchedulerView } from '../../db/scheduler-views';
import type { AppDeps } from '../env';

/**
 * Records what a scheduler (`source`, e.g. `slurm:hpc1`) says of a node, in one transaction: the
 * node locked (NOT_FOUND when the caller cannot see it or it is deleted, FORBIDDEN when it sees it
 * only through a grant; INVALID_STATE when it is decommissioned), the view stored
 * (`recordSchedulerView`), and its down condition (`SchedulerNodeDown`, `SchedulerNodeNotReady` for
 * Kubernetes: `downConditionOf`) reported as an agent's condition is (`reportAndRemediate`): true —
 * a NoSchedule reason and a remediation — while the scheduler marks the node down, false once it no
 * longer does.
 */
export function recordNodeSchedulerView(
  deps: Pick<AppDeps, 'db'>,
  principal: Principal,
  target: { nodeId: string; source: string; report: SchedulerReport },
): Promise<SchedulerViewRow> {
  const actor = actorOf(principal);
  return deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, target.nodeId, principal);
    if (node.deletedAt) throw nodeNotFound(node.id);
    assertControllable(node);
    const { view, down } = await recordSchedulerView(tx, node, target.source, target.report, actor);
    if (down) {
      await reportAndRemediate(tx, node.id, { ...down, source: 'scheduler' }, actor);
    }
    return view;
  });
}
