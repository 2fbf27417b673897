# The production image: dependencies without dev tools, run as the unprivileged `node` user.
# The same image serves api and worker (SIGNET_PROCESSES); both answer GET /healthz on PORT.
# Node 24, the current LTS (CI runs the unit and PGlite integration tests on it: scripts/test-node24.sh).
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --chown=node:node . .
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 CMD ["node", "scripts/healthcheck.js"]
CMD ["node", "--max-old-space-size=384", "--require", "tsx/cjs", "src/main.ts"]
