# One image for the API and the worker; docker-compose.yml picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# patch-package applies patches/ after the install (postgres.js, @temporalio/worker: each change is marked "Drydock patch" and says why).
COPY patches ./patches
RUN npm ci --omit=dev
COPY . .
EXPOSE 8080
CMD ["npx", "tsx", "api/server.ts"]
