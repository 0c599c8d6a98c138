#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx compiles them on load); `npm run build` makes
// dist/drydock-bridge.js, the same program for plain node.
import { register } from 'tsx/esm/api';

register();
await import('../entry/drydock-bridge.ts');
