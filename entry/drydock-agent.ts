// The node agent: bin/drydock-agent.mjs (tsx) and dist/drydock-agent.js (`npm run build`) both start here.
import { main } from '../agent/main';

process.exitCode = await main(process.argv.slice(2));
