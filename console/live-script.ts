import { readFileSync } from 'node:fs';

/**
 * The live script (console/assets/live.js), read once; served as it is (no build step). Read from
 * a module in console/, not deeper: its `./assets/` is console/assets/ in the sources and
 * dist/assets/ in the build, which copies the folder beside the bundles (scripts/build.ts).
 */
export const LIVE_SCRIPT = readFileSync(new URL('./assets/live.js', import.meta.url), 'utf8');
