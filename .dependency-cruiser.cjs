/**
 * The house's layers, bottom up (README "Architecture"). A folder may import its own
 * layer's shared ground and anything below it, never a folder beside it or above it:
 * so no two folders import each other, and nothing imports upward. `npm run lint` runs
 * this (npm run lint:deps).
 */
const LAYERS = [
  // The vocabulary: the gateway's contract, a deal, an outcome, the address words. Types and pure functions.
  ['src/domain'],
  ['src/errors.ts', 'src/logger.ts'],
  ['src/files', 'src/realty'],
  // src/db: the database, its schema and migrations; under the config (which reads where it is) and every store.
  ['src/input', 'src/sandbox', 'src/redis', 'src/db'],
  // The docflow types, each a module (its columns, its request): on the input's words and the contract.
  ['src/docflows'],
  // src/ledger: claims on deals, and a row's outcome in the database (written in the ledger's and the feed's transactions).
  ['src/config.ts', 'src/queue', 'src/ledger', 'src/metrics', 'src/privacy'],
  ['src/outcomes', 'src/feed'],
  ['src/batch'],
  ['src/results', 'src/worker'],
  ['src/followups'],
  // A loaded batch to its end (wait, feed, results, attention, exit code): the one pipeline of `run` and the inbox.
  ['src/pipeline'],
  ['src/schedule', 'src/dashboard'],
  ['jobs'],
  ['src/cli'],
];

const literal = (path) => path.replace(/[.]/g, '\\.');
/** A path pattern matching a folder's files, or one file. */
const pattern = (path) => (path.endsWith('.ts') ? `^${literal(path)}$` : `^${literal(path)}/`);
/** Files that stand in a layer of their own although their folder stands in another. */
const FILES = LAYERS.flat().filter((place) => place.endsWith('.ts'));

const layered = LAYERS.flatMap((layer, level) =>
  layer.flatMap((place) => {
    const above = LAYERS.slice(level + 1).flat();
    const beside = layer.filter((other) => other !== place);
    if (above.length + beside.length === 0) return [];
    const below = LAYERS.slice(0, level).flat();
    const own = FILES.filter((file) => file !== place && file.startsWith(`${place}/`));
    return {
      name: `layer:${place}`,
      comment: `${place} (layer ${level + 1} of ${LAYERS.length}) imports only layers below it: not ${[...beside, ...above].join(', ')}`,
      severity: 'error',
      from: { path: pattern(place), ...(own.length > 0 && { pathNot: own.map(pattern) }) },
      to: { path: [...beside, ...above].map(pattern), pathNot: FILES.filter((file) => below.includes(file)).map(pattern) },
    };
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layered,
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop: move what both need below both.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'sandbox-knows-only-the-contract',
      comment:
        "The sandbox emulates the gateway from the contract's types alone: it imports nothing else of the project (but where the package's own folder is, and the address type words it shares with the loader).",
      severity: 'error',
      from: { path: '^src/sandbox/' },
      to: {
        path: '^(src|jobs)/',
        pathNot: ['^src/sandbox/', '^src/domain/gateway\\.ts$', '^src/domain/address-words\\.ts$', '^src/files/package-root\\.ts$'],
      },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-dev-dependencies-in-production',
      comment: 'What ships (src/, jobs/) uses only the dependencies npm installs for it.',
      severity: 'error',
      from: { path: '^(src|jobs)/' },
      to: { dependencyTypes: ['npm-dev'], pathNot: ['node_modules/@types/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports tie layers as much as the others do.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
