# realty-batch: build with dev dependencies, run with production ones only, as a non-root user.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json npm-shrinkwrap.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-lua.mjs scripts/bundle-cli.mjs ./scripts/
COPY src ./src
COPY jobs ./jobs
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json npm-shrinkwrap.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/bin ./dist/bin
COPY samples ./samples
USER node
ENTRYPOINT ["node", "dist/bin/realty-batch.js"]
CMD ["--help"]
