// A scheduler bridge: bin/drydock-bridge.mjs (tsx) and dist/drydock-bridge.js (`npm run build`) both start here.
import { main } from '../bridges/main';

process.exitCode = await main(process.argv.slice(2));
