# One image for the API, the worker, the migration one-shot and the CLI; docker-compose.yml picks
# the command. Both stages run the Node version the repository pins for its own scripts (the `node`
# dev dependency in package.json); test/compose.test.ts keeps the two in step.

# Build: every dependency, then `npm run build` (dist/: the bundled programs, the migrations, the
# console's assets, the prebuilt workflow bundles).
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace's manifest: npm ci links the workspace package (the API client, which the build bundles).
COPY packages/client/package.json ./packages/client/
# patch-package applies patches/ after the install (postgres.js: the change is marked "Drydock patch" and says why).
COPY patches ./patches
RUN npm ci
COPY . .
RUN npm run build

# Runtime: production dependencies only (patch-package is one, so the postinstall still patches)
# and dist/; no TypeScript, no tsx. Runs as the image's unprivileged `node` user (uid 1000).
FROM node:24.21.0-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NODE_OPTIONS=--enable-source-maps
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
COPY patches ./patches
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8080
# The slim image has no curl: Node's fetch asks the API's liveness endpoint. The worker serves no
# /healthz; docker-compose.yml gives it a check on its /readyz (200 once it polls its task queue),
# served beside /metrics on DRYDOCK_WORKER_METRICS_PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/api.js"]
