# syntax=docker/dockerfile:1
#
# Switchboard image. Build: docker build -t switchboard .
# Node 26 is the current LTS line; override with --build-arg NODE_IMAGE=... to pin a digest.
ARG NODE_IMAGE=node:26-trixie-slim

# --- build: all dependencies, compile TypeScript to dist/ ---
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts are needed to compile (tsc only); skipping them keeps the build hermetic.
# `npm ci`: exactly the lockfile, on any build platform (it records every platform's binaries).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# The web console's sources; `npm run build` bundles them into dist/console (docs/console.md).
COPY console ./console
RUN npm run build

# --- prod-deps: production dependencies only, installed apart so no npm cache reaches the image ---
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    EMBEDDED_DATA_DIR=/data/db
WORKDIR /app
# A dedicated numeric user (not the image's uid 1000) so Kubernetes runAsNonRoot can verify it.
# /data is only for the embedded database (single replica, no DATABASE_URL): mount a volume there.
RUN groupadd --system --gid 10001 switchboard \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
       --shell /usr/sbin/nologin switchboard \
    && mkdir /data \
    && chown 10001:10001 /data
# Code and dependencies stay owned by root: the service cannot modify itself.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# "type": "module" in package.json makes Node load dist/ as ES modules.
COPY package.json ./
USER 10001:10001
EXPOSE 8080
# The slim image has no curl: ask /healthz with Node's own fetch. Kubernetes ignores this and uses
# the chart's probes instead.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node runs directly (not through npm) so SIGTERM reaches the service and starts its graceful shutdown.
CMD ["node", "dist/src/main.js"]
