import type { NodeAxes } from './node';
import { provisionRules } from './provision';

const DEDICATED_PREFIX = 'taint:dedicated=';

/**
 * Why a node refuses a new allocation for `tenantId`; empty when it accepts one.
 * The one placement rule (docs/concepts.md, Placement): every placement path calls this.
 */
export function placementRefusals(node: NodeAxes, tenantId: string): string[] {
  const reasons: string[] = [];
  if (node.deletedAt) reasons.push('deleted');
  if (!provisionRules(node.provisionState).placeable) reasons.push(`provisionState:${node.provisionState}`);
  if (node.access !== 'allowed') reasons.push('blocked');
  if (node.cordoned) reasons.push('cordoned');
  if (node.maintenance) reasons.push('maintenance');
  const [only, ...more] = node.noScheduleReasons;
  const toleratedDedication = only === `${DEDICATED_PREFIX}${tenantId}` && more.length === 0;
  if (!toleratedDedication) reasons.push(...node.noScheduleReasons);
  return reasons;
}
