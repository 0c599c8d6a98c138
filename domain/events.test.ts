import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type DrydockEvent } from './events';

describe('event types', () => {
  it('lists every type once, each a dotted lowercase name', () => {
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
    for (const type of EVENT_TYPES) expect(type).toMatch(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/);
  });

  it('refuses a misspelt type or a wrong payload at compile time (checked by tsc)', () => {
    const refused: DrydockEvent[] = [
      // @ts-expect-error: no such event type
      { type: 'node.cordonned' },
      // @ts-expect-error: the payload has the wrong shape
      { type: 'node.uncordoned', data: { endedDrain: 'yes' } },
      // @ts-expect-error: this event carries a payload
      { type: 'node.approved' },
      // @ts-expect-error: this event carries none
      { type: 'node.cordoned', data: { note: 1 } },
    ];
    const accepted: DrydockEvent[] = [
      { type: 'node.cordoned' },
      { type: 'node.adopting' },
      { type: 'node.adopting', data: { joinToken: 'jt_1', hostname: 'gpu-1' } },
      { type: 'node.disconnected', data: { reason: 'goodbye' } },
    ];
    expect(refused.length + accepted.length).toBe(8);
  });
});
