import type { NodeCountName, NodeState } from '../domain/node-state';

/** Each state's glyph on the rack map, worst first (NODE_STATES' order): never colour alone. */
export const STATE_GLYPHS: Record<NodeState, string> = {
  lost: '✕',
  unreachable: '?',
  offline: '○',
  decommissioned: '–',
  blocked: '⊘',
  quarantined: '◆',
  maintenance: '⚙',
  draining: '↓',
  cordoned: '‖',
  unhealthy: '!',
  pending: '…',
  schedulable: '✓',
};

/** The overview's counts in words. */
export const COUNT_WORDS: Record<NodeCountName, string> = {
  alive: 'alive',
  unreachable: 'unreachable',
  lost: 'lost',
  cordoned: 'cordoned',
  draining: 'draining',
  maintenance: 'maintenance',
  quarantined: 'quarantined',
  pendingApproval: 'pending approval',
};
