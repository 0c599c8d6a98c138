#!/usr/bin/env node
// Runs the TypeScript sources directly: tsx compiles them on load, so there is no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../agent/main.ts');
process.exitCode = await main(process.argv.slice(2));
