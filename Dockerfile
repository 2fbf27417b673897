# The production image: dependencies without dev tools, run as the unprivileged `node` user.
# The same image serves api and worker (SIGNET_PROCESSES); both answer GET /healthz on PORT.
# Node 24, the current LTS (CI runs the unit and PGlite integration tests on it: scripts/test-node24.sh).
FROM node:24-bookworm-slim
ENV NODE_ENV=production
# As `npm start`: glibc's malloc keeps an arena per thread it sees busy, each holding freed memory of
# its own (the Temporal worker's threads among them); two, with a young generation of 8 MB per half,
# brought the benchmark's peak RSS of api + worker from 473 to 347 MB (docs/benchmarks.md).
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --chown=node:node . .
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 CMD ["node", "scripts/healthcheck.js"]
# The node flags, as `npm start` has them, are explained in docs/deploying.md ("Node's heap on a small machine").
CMD ["node", "--max-old-space-size=384", "--max-semi-space-size=8", "--heap-growing-percent=75", "--require", "tsx/cjs", "src/main.ts"]
