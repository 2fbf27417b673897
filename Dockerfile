# The production image: the build of `npm run build` and the production dependencies, run as the
# unprivileged `node` user. The same image serves api and worker (SIGNET_PROCESSES); both answer GET /healthz on PORT.
# Node 24, the current LTS (CI runs the unit and PGlite integration tests on it: scripts/test-node24.sh).
FROM node:24-bookworm-slim AS toolchain
# pkcs11js (a seal key on a PKCS#11 token) is a native module, compiled at install: the slim image lacks the tools.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./

FROM toolchain AS build
RUN npm ci --no-audit --no-fund
COPY . .
# Compiles to dist/ and bundles the workflows once (scripts/build.ts).
RUN npm run build

FROM toolchain AS dependencies
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
COPY --from=dependencies --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node scripts/start-production.sh scripts/healthcheck.js ./scripts/
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.js"]
# Plain node on the build, no tsx and no webpack: the one command test/system/productionBuild.test.ts starts too.
CMD ["sh", "scripts/start-production.sh"]
