import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type axe from 'axe-core';

/** axe-core's browser build, read from node_modules once. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A rule axe found broken, with the elements that break it. */
export interface Violation {
  rule: string;
  impact: string;
  help: string;
  /** Each offending element's selector and axe's account of what is wrong with it. */
  nodes: { target: string; summary: string }[];
}

/**
 * Runs axe-core (every rule but the experimental ones: WCAG 2.2 A and AA, best practices) on
 * `page` as it is now, and answers its serious and critical violations. The console's CSP refuses
 * an injected `<script>`; the engine is evaluated through the DevTools protocol instead, which
 * CSP does not govern, so the page is tested with its real headers.
 */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const engine = (globalThis as unknown as { axe: typeof axe }).axe;
    return (await engine.run({ resultTypes: ['violations'] })).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      rule: v.id,
      impact: v.impact!,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary ?? '' })),
    }));
}
