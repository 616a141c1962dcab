import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_GLOBALS = {
  fetch: 'readonly',
  process: 'readonly',
  console: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  setInterval: 'readonly',
  clearInterval: 'readonly',
  Buffer: 'readonly',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'out/', 'coverage/', 'bench/results.json'] },
  js.configs.recommended,
  {
    languageOptions: { globals: NODE_GLOBALS },
    rules: { 'no-console': ['error'] },
  },
  // TypeScript: the type-checked rules (a floating promise, an `any` let through, a thrown
  // non-Error, an await of a non-promise), on the project's own tsconfig.
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // What ships: one function, one concern. Past 20 paths through it, split it.
  { files: ['src/**/*.ts', 'jobs/**/*.ts', 'scripts/**/*.ts'], rules: { complexity: ['error', 20] } },
  // Tests read JSON of child processes and HTTP answers, and vitest's callbacks are async by habit.
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // `parse(...) as Row[]` reads better in a test than parse<Row[]>(...).
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  { files: ['src/cli/**', 'scripts/**', 'test/**', 'bench/**'], rules: { 'no-console': 'off' } },
);
