// The operator CLI: bin/drydock.mjs (tsx) and dist/drydock.js (`npm run build`) both start here.
import { main } from '../cli/main';

process.exitCode = await main(process.argv.slice(2));
