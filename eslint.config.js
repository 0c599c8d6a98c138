import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.drydock/', 'dist/', 'db/migrations/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: globals.node,
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The server side logs through the one logger it is handed (observability/log.ts), as JSON
    // lines. The CLI and the agent print for their user; benches and tests print their results.
    files: [
      'api/**/*.ts',
      'worker.ts',
      'activities/**/*.ts',
      'db/**/*.ts',
      'workflows/**/*.ts',
      'scripts/**/*.ts',
      'observability/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    // Tests (and the soak's load) read JSON replies loosely, the way a client would.
    files: ['test/**/*.ts', '**/*.test.ts', 'bench/**/*.ts', 'scripts/soak/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: globals.node },
  },
  // The layers (docs/architecture.md). Tests are not a layer: they may import anything.
  {
    // Pure rules: other domain/ files and packages, nothing else of ours.
    files: ['domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./', message: 'domain/ imports only domain/ files (and packages).' }] },
      ],
    },
  },
  {
    // The typed API client stands alone (the CLI, the agent and runbook scripts import it).
    files: ['packages/client/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./', message: '@drydock/client imports only its own files (and packages).' },
          ],
        },
      ],
    },
  },
  // The console reaches the API through the shared client only (the app's context and the
  // workflows' progress answers as types).
  consoleImports(['console/*.ts', 'console/*.tsx'], '\\.\\./'),
  consoleImports(['console/pages/*.tsx', 'console/routes/*.tsx'], '\\.\\./\\.\\./'),
  {
    // The command-line kit both binaries share: domain/ rules and Node, nothing of the CLI or agent.
    files: ['cli-kit/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!domain/)',
              message: 'cli-kit/ imports only domain/ files, its own and packages.',
            },
          ],
        },
      ],
    },
  },
  {
    // A scheduler bridge is a client of the HTTP API only, like the agent: domain/ rules, the
    // command-line kit, @drydock/client and its own files.
    files: ['bridges/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(?!domain/|cli-kit/|bridges/)[a-z-]+/',
              message:
                'bridges/ imports only domain/, cli-kit/, @drydock/client, its own files and packages.',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O. Values come
    // from the SDK, domain/ and workflows/ only; activities are known by their types alone.
    files: ['workflows/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./activities(/|$)',
              allowTypeImports: true,
              message: 'Workflow code knows activities by their types only (`import type`).',
            },
            {
              // The client side of a workflow (liveness-client.ts) takes a Temporal client as a type.
              regex: '^@temporalio/client$',
              allowTypeImports: true,
              message: 'Workflow code does not use the Temporal client; take it as a type.',
            },
            {
              regex: '^(?!@temporalio/(workflow|common|client)$|\\.\\./(domain|activities)(/|$)|\\./)',
              message:
                'workflows/ imports only @temporalio/workflow, @temporalio/common, domain/, its own files and activity types.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'Buffer'],
    },
  },
  {
    // The workflows and the domain rules they import are evaluated once per worker and shared by
    // every workflow run (worker.ts, `workflowBundleSources`): module scope must hold no state a run
    // could change and another see, so no top-level `let`/`var` and no module-level collections.
    files: ['workflows/**/*.ts', 'domain/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'Program > VariableDeclaration',
          'Program > ExportNamedDeclaration > VariableDeclaration',
        ].flatMap((declaration) => [
          {
            selector: `${declaration}[kind!='const']`,
            message: 'Module scope is shared by every workflow run: no top-level let or var.',
          },
          {
            selector: `${declaration} > VariableDeclarator > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet|Array)$/]`,
            message: 'Module scope is shared by every workflow run: no module-level collection.',
          },
        ]),
      ],
    },
  },
  {
    // The API talks to Postgres only: an operation is requested through the outbox
    // (db/requests/), never by calling Temporal, whose client, workflows' runtime and activities
    // belong to the worker (docs/architecture.md, rule 4).
    files: ['api/**/*.ts', 'console/**/*.ts', 'console/**/*.tsx'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@temporalio/(client|worker|activity)$',
              message: 'The API does not call Temporal: write to the outbox (db/outbox.ts).',
            },
            {
              regex: '^(\\.\\./)+(activities|dispatch)(/|$)',
              message: 'The API does not import the worker side (activities/, dispatch/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Routes read through db/queries/ and change things through a service (api/services/): any
    // other db/ module (writes, locks, the schema) only as types.
    files: ['api/routes/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+db/(?!queries/)',
              allowTypeImports: true,
              message: 'Routes read through db/queries/ and write through a service in api/services/.',
            },
          ],
        },
      ],
    },
  },
  {
    // Queries only read: no writes, locks or transactions, and no import of a module that writes.
    files: ['db/queries/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^(insert|update|delete|transaction|for)$/]',
          message: 'db/queries/ only reads; a write, lock or transaction belongs in db/ or a service.',
        },
        {
          // Raw SQL may write; a prepared drizzle query runs what it was built from (a select).
          selector:
            "CallExpression[callee.property.name='execute']:not([callee.object.callee.property.name='prepare'])",
          message: 'db/queries/ only reads; a write, lock or transaction belongs in db/ or a service.',
        },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!schema$|client$|\\.\\./domain/)',
              allowTypeImports: true,
              message: 'db/queries/ imports the schema, other queries and domain/ only.',
            },
          ],
        },
      ],
    },
  },
);

/** The console's import rule for its files at one depth: `up` is the regex of `../` out of console/. */
function consoleImports(files, up) {
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^${up}api/env$`,
              allowTypeImports: true,
              message: 'console/ takes the app context as a type only.',
            },
            {
              regex: `^${up}workflows/definitions$`,
              allowTypeImports: true,
              message: 'console/ takes the progress workflows answer as types only.',
            },
            {
              regex: `^${up}(?!domain/|api/env$|workflows/definitions$)`,
              message:
                'console/ imports @drydock/client, domain/ and its own files (the API through the client only).',
            },
          ],
        },
      ],
    },
  };
}
