import { describe, it } from 'vitest';
import { useHarness } from '../support/harness';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness({ worker: false });

describe('label: security', () => {
  it('needs compute:nodes:update on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'POST',
      path: (id) => `/v1/nodes/${id}/label`,
      body: { set: { rack: 'b7' } },
      action: 'compute:nodes:update',
    });
  });
});
