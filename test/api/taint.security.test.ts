import { describe, it } from 'vitest';
import { useHarness } from '../support/harness';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness({ worker: false });

describe('taint: security', () => {
  it('needs compute:nodes:update on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'POST',
      path: (id) => `/v1/nodes/${id}/taint`,
      body: { add: ['rma'] },
      action: 'compute:nodes:update',
    });
  });
});
