/**
 * Which way dependencies may point in src/ (`npm run depcheck`, run by `npm run check` and CI).
 * The picture and the reasons: docs/architecture.md, "Modules".
 *
 * Three kinds of folder:
 * - foundations, in layers: config < common < database, lifecycle, llm < admin-framework.
 *   A foundation imports only the layers below it, never a feature;
 * - features (every other folder): may import foundations and each other, without cycles;
 * - composition roots, which wire everything: main.ts, app.module.ts, entities.ts, bootstrap/,
 *   admin/ (the admin tool as shipped) and every entry point (`*.cli.ts`). Nothing else imports them.
 */
const ROOTS = '^src/(main|app\\.module|entities)\\.ts$|^src/(bootstrap|admin)/|\\.cli\\.ts$';
const ENTRY_POINTS = '\\.cli\\.ts$|^src/main\\.ts$';

/** A rule that a foundation layer imports nothing in src/ but itself and `below`. */
function layer(name, folders, below) {
  const allowed = [...folders, ...below].join('|');
  return {
    name,
    severity: 'error',
    comment: `src/{${folders.join(',')}} may import only src/{${[...below].join(',') || 'nothing else'}}: it is shared by features, so it imports none`,
    from: { path: `^src/(${folders.join('|')})/`, pathNot: ENTRY_POINTS },
    to: { path: '^src/', pathNot: `^src/(${allowed})/` },
  };
}

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No file imports itself through others (type-only imports included).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment: 'No folder depends on itself through other folders.',
      scope: 'folder',
      from: { path: '^src/[^/]+' },
      to: { circular: true },
    },
    layer('config-is-the-base', ['config'], []),
    layer('common-over-config', ['common'], ['config']),
    layer('shared-services-over-common', ['database', 'lifecycle', 'llm'], ['common', 'config']),
    layer('admin-framework-imports-no-feature', ['admin-framework'], ['database', 'common', 'config']),
    {
      name: 'turn-core-imports-no-transport-storage-or-admin',
      severity: 'error',
      comment:
        'src/turns (the turn types and the "turn recorded" hook) is imported by the transports, the turn store and usage; it imports only foundations and the agent/tool types a turn plan names.',
      from: { path: '^src/turns/' },
      to: { path: '^src/', pathNot: '^src/(turns|common|config|llm|specialists|tools)/' },
    },
    {
      name: 'hot-path-does-not-reach-the-admin-api',
      severity: 'error',
      comment:
        'A turn (src/responses, src/turns, and usage recording) must not load the admin API: the usage report lives in UsageModule, in the admin graph; the hot path imports UsageBudgetsModule.',
      from: {
        path: '^src/(responses|turns)/|^src/usage/usage-(budgets\\.module|budget\\.service|recorder)\\.ts$',
      },
      to: { path: '^src/admin-api/', reachable: true },
    },
    {
      name: 'conversations-use-the-turn-store-api',
      severity: 'error',
      comment:
        'conversations/ reads and writes turns and threads through the turn store (src/responses/store), the turn core (src/turns) and the item views and request parsing it shares with POST /v1/responses; never the executor, runner, streams or durable turns.',
      from: { path: '^src/conversations/' },
      to: {
        path: '^src/responses/',
        pathNot:
          '^src/responses/(store/(turn-store\\.module|conversation-store\\.repository|chat-history\\.repository)\\.ts|dto/|conversation-items\\.ts$|input-item-view\\.ts$)',
      },
    },
    {
      name: 'composition-roots-are-imported-by-roots-only',
      severity: 'error',
      comment:
        'main.ts, app.module.ts, entities.ts, bootstrap/, admin/ and entry points know every feature; a feature or foundation importing one would import them all.',
      from: { pathNot: ROOTS },
      to: { path: ROOTS },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports is dead code, unless it is an entry point, a worker or a spec.',
      from: { orphan: true, pathNot: `${ENTRY_POINTS}|\\.worker\\.ts$|\\.spec\\.ts$|\\.d\\.ts$` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a cycle of types is still a cycle for the reader.
    tsPreCompilationDeps: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
