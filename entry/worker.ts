// The worker process: `npm run worker` (tsx) and dist/worker.js (`npm run build`) both start here.
import { runWorkerProcess } from '../worker';

runWorkerProcess();
