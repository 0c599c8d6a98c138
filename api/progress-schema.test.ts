import type { z } from '@hono/zod-openapi';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { OperationProgress } from '../domain/progress';
import { ProgressSchema } from './progress-schema';

describe('the progress the OpenAPI document describes', () => {
  it('is the shape the activities write and the workflows answer (domain/progress.ts)', () => {
    expectTypeOf<z.infer<typeof ProgressSchema>>().toEqualTypeOf<OperationProgress>();
    // The union is keyed by kind: every kind has its schema.
    expect(ProgressSchema.options.map((option) => option.shape.kind.value).sort()).toEqual([
      'decommission',
      'drain',
      'maintenance',
      'pool-drain',
      'pool-maintenance',
      'purge',
      'remediation',
    ]);
  });
});
