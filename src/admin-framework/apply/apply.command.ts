import { cliActor } from '../audit/cli-audit.js';
import { ApplyService } from './apply.service.js';
import { parseApplyDocument } from './apply-document.js';
import { readTextFile, stringOption, type AdminCommand } from '../admin-command.js';

export const applyCommand: AdminCommand = {
  words: ['apply'],
  summary:
    'create or update organizations, tools, assistants, specialists… as a YAML or JSON file declares them',
  options: {
    file: {
      type: 'string',
      short: 'f',
      placeholder: '<file.yaml|file.json>',
      required: true,
      description: 'the file',
    },
    'dry-run': { type: 'boolean', description: 'report what would change, change nothing' },
    prune: {
      type: 'boolean',
      description:
        'also delete what the file no longer declares, within the organizations it names and the lists it states',
    },
  },
  async run({ app, options, cwd }) {
    const file = stringOption(options, 'file') ?? '';
    const document = await parseApplyDocument(await readTextFile(cwd, file), file);
    const dryRun = options['dry-run'] === true;
    const prune = options.prune === true;
    const report = await app.get(ApplyService).apply(document, { dryRun, prune, audit: cliActor() });
    const summary = report.summary(prune);
    const verb = dryRun ? 'Would apply' : 'Applied';
    return {
      json: { file, dryRun, prune, changes: report.changes, summary },
      text: [
        ...report.changes.map((c) => `${c.kind} ${c.key}: ${c.action} (${c.id})`),
        `${verb} ${file}: ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged` +
          (prune ? `, ${summary.deleted} deleted.` : '.'),
      ].join('\n'),
    };
  },
};
