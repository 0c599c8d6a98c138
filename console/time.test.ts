import { jsx } from 'hono/jsx/jsx-runtime';
import { describe, expect, it } from 'vitest';
import { relative, RenderedAt, When } from './time';

const NOW = Date.parse('2026-12-05T08:00:00Z');
const ago = (seconds: number) => relative(NOW - seconds * 1000, NOW);

describe('relative times', () => {
  it('reads in the largest unit that reads well, past and future', () => {
    expect(ago(0)).toBe('0 s ago');
    expect(ago(42)).toBe('42 s ago');
    expect(ago(89)).toBe('89 s ago');
    expect(ago(90)).toBe('1 min ago');
    expect(ago(89 * 60 + 59)).toBe('89 min ago');
    expect(ago(90 * 60)).toBe('1 h ago');
    expect(ago(47 * 3600 + 3599)).toBe('47 h ago');
    expect(ago(48 * 3600)).toBe('2 d ago');
    expect(ago(-300)).toBe('in 5 min');
  });

  it('renders a <time> with the exact instant and its UTC time on hover, counted from the render', () => {
    const at = '2026-12-05T07:59:18.123Z';
    const html = String(jsx(RenderedAt.Provider, { value: NOW, children: jsx(When, { at }) }));
    expect(html).toBe(`<time datetime="${at}" title="2026-12-05 07:59:18 UTC">42 s ago</time>`);
  });
});
