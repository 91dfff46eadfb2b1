import type { QuickstartCredentials } from './quickstart.service.js';

/**
 * What `npm start` prints last: where the service listens and, on the first start of an empty
 * embedded database, the demo credentials as `export` lines ready to paste into a shell (the
 * README's and docs' commands use exactly these variables).
 */
export function startBanner(options: {
  base: string;
  where: string;
  embedded: boolean;
  quickstart: QuickstartCredentials | null;
}): string {
  const { base, where, embedded, quickstart } = options;
  const lines = [`Switchboard listening on ${base} (${where})`];
  if (quickstart) {
    const rule = '='.repeat(78);
    lines.push(
      '',
      rule,
      'Quickstart: a demo organization, an assistant on the offline model (it answers without a',
      'network or a model key) and a full_access API key were created. The key is shown only this',
      'once. Paste these lines into the shell you call Switchboard from:',
      '',
      `export SWITCHBOARD_URL=${base}`,
      `export SWITCHBOARD_KEY=${quickstart.apiKey}`,
      `export ASSISTANT_ID=${quickstart.assistantId}`,
      '',
      'Then try it:',
      `  curl -s "$SWITCHBOARD_URL/v1/responses" -H "x-api-key: $SWITCHBOARD_KEY" \\`,
      `    -H 'content-type: application/json' -d '{"model":"'"$ASSISTANT_ID"'","input":"hello"}'`,
      rule,
    );
  } else if (embedded) {
    lines.push(
      `Quickstart key lost? Issue another: npx switchboard-admin keys create --org demo --name laptop --scopes full_access`,
    );
  }
  return lines.join('\n') + '\n';
}
