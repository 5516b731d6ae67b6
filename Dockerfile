# syntax=docker/dockerfile:1.7
# RepGen app/worker image: `repgen serve` (webhooks) and `repgen worker` (pipeline; repro scripts run in their
# own Kubernetes Jobs, not here). Multi-stage: dependencies are installed in a throwaway stage, the runtime
# stage holds only production node_modules and the sources, and runs as an unprivileged user.
#   docker build -t ghcr.io/example/repgen:0.1.0 .

ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci runs `prepare` (scripts/build-dist.mjs), which finds no sources in this stage and builds nothing: the image
# runs the sources through tsx (bin/repgen.js).
COPY scripts/build-dist.mjs ./scripts/
# onnxruntime-node's install script would download CUDA binaries: package.json's allowScripts denies it on an
# npm that reads that field (npm 11.19 does); an older npm runs it, and the script reads this variable and skips.
ENV ONNXRUNTIME_NODE_INSTALL=skip
# Production dependencies only (tsx is one: it loads the TypeScript sources at startup, no build step).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# python3 + pyflakes for the agent's static checks of candidate scripts, git for checkouts, tini as PID 1 so
# signals reach node and BullMQ can hand running jobs back on shutdown.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-pyflakes git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 repgen \
 && useradd --uid 10001 --gid repgen --no-create-home --home-dir /tmp --shell /usr/sbin/nologin repgen
# uv, pinned to the version scripts/ensure-system.sh installs, at the path the env builder runs (PINNED_UV in
# src/env/uv-builder.ts). On Kubernetes the worker only asks it its version: the builds themselves run in Jobs on
# this same image (a "projectEnv" row of REPGEN_K8S_IMAGES), which is why it must be here too.
COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /usr/local/lib/repgen-uv/bin/uv
RUN ln -s /usr/local/lib/repgen-uv/bin/uv /usr/local/bin/uv
WORKDIR /app
ENV NODE_ENV=production \
    HOME=/tmp \
    REPGEN_PYTHON=/usr/bin/python3
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --chown=root:root package.json package-lock.json tsconfig.json ./
COPY --chown=root:root bin ./bin
COPY --chown=root:root src ./src
COPY --chown=root:root workers ./workers
COPY --chown=root:root prompts ./prompts
# Files are root-owned and read-only to the process; writable space is /tmp (an emptyDir in k8s/).
USER 10001:10001
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/repgen.js"]
CMD ["serve"]
