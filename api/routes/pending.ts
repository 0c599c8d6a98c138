// A bridge until the services and start branches merge: they build these routers per app and
// export `<area>Routes()` themselves; the lead deletes this file then and imports from each.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { agentRouter } from './agent';
import { allocationsRouter } from './allocations';
import { nodeAccessRouter } from './node-access';
import { nodeControlsRouter } from './node-controls';

type Routes = () => OpenAPIHono<AppEnv>;
export const agentRoutes: Routes = () => agentRouter;
export const allocationsRoutes: Routes = () => allocationsRouter;
export const nodeAccessRoutes: Routes = () => nodeAccessRouter;
export const nodeControlsRoutes: Routes = () => nodeControlsRouter;
