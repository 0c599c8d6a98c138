import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import { LivenessBadge, StatusBadge } from './badge';

describe('status badges', () => {
  it('say their state in words, in a tone, with an icon hidden from screen readers', () => {
    const html = String(jsx(LivenessBadge, { liveness: 'lost' }));
    expect(html).toMatch(/^<span class="badge bad" data-badge="liveness"><svg viewBox="0 0 16 16"/);
    expect(html).toContain('aria-hidden="true"');
    expect(html).toContain('stroke-width="1.7"');
    expect(html).toMatch(/<\/svg><span>lost<\/span><\/span>$/);
  });

  it('give every status a tone, and an unknown one a neutral tone', () => {
    expect(String(jsx(StatusBadge, { status: 'running' }))).toContain('class="badge busy"');
    expect(String(jsx(StatusBadge, { status: 'paused', text: 'Paused' }))).toMatch(
      /class="badge paused".*<span>Paused<\/span>/,
    );
    expect(String(jsx(StatusBadge, { status: 'something-new' }))).toContain('class="badge idle"');
  });
});
