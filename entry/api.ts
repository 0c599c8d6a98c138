// The API process: `npm run api` (tsx) and dist/api.js (`npm run build`) both start here.
import { runApiProcess } from '../api/server';

runApiProcess();
