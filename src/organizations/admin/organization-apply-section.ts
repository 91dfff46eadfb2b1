import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  requiredString,
  rootEntry,
} from '../../admin-framework/apply/apply-document.js';
import type { ApplyDocument, DocumentEntry } from '../../admin-framework/apply/apply-document.js';
import type { ApplyAction, ApplyReport } from '../../admin-framework/apply/apply-report.js';
import {
  ApplySectionBase,
  claimKeys,
  type InputErrorClass,
} from '../../admin-framework/apply/apply-section.js';
import type { OrganizationEntity } from '../entities/organization.entity.js';
import type { OrganizationsService } from '../organizations.service.js';

/** One `organizations[]` entry of the file, the organization it names, and where to write. */
export interface OrganizationInFile {
  /** The `organizations[i]` entry. */
  entry: DocumentEntry;
  slug: string;
  organization: OrganizationEntity;
  /** The one transaction of the apply. */
  manager: EntityManager;
  report: ApplyReport;
}

/** The `name` of each declared entry: what prune keeps. */
export const declaredNames = (entries: readonly DocumentEntry[]): string[] =>
  entries.map((entry) => requiredString(entry, 'name'));

/** A row a section wrote or deleted, as its report line names it. */
export interface NamedRow {
  id: string;
  name: string;
}

/** Records each row `apply --prune` deleted, keyed as the file names it: `<keyPrefix>/<name>`. */
export function recordDeleted(
  report: ApplyReport,
  kind: string,
  keyPrefix: string,
  rows: readonly NamedRow[],
): void {
  for (const row of rows)
    report.record({ kind, key: `${keyPrefix}/${row.name}`, id: row.id, action: 'deleted' });
}

/** How `apply --prune` removes one list's undeclared rows. */
export interface PruneList {
  /** The `organizations[]` key, e.g. `tools`. */
  list: string;
  /** The report's kind, e.g. `tool`. */
  kind: string;
  /** What to keep of the declared entries; their names unless given. */
  keep?: (declared: DocumentEntry[]) => string[];
  /** Deletes the organization's rows not in `keep` and returns them. */
  remove: (organizationId: string, keep: string[], manager: EntityManager) => Promise<readonly NamedRow[]>;
}

/**
 * The base of every section of things that belong to an organization (tools, assistants,
 * specialists, gateways): for each `organizations[]` entry that declares some, it finds the
 * organization (the organizations section, order 100, wrote it in this same transaction) and
 * hands it to `applyTo`.
 */
export abstract class OrganizationApplySection extends ApplySectionBase {
  constructor(protected readonly organizations: OrganizationsService) {
    super();
  }

  /** The `organizations[]` lists this section writes; an entry with none of them is skipped. */
  protected abstract readonly lists: readonly string[];

  /** Whether this `organizations[]` entry declares anything this section writes. */
  protected declares(organizationEntry: DocumentEntry): boolean {
    return this.lists.some((list) => entriesAt(organizationEntry, list).length > 0);
  }

  /** Writes what `target.entry` declares for this section, recording each item in `target.report`. */
  protected abstract applyTo(target: OrganizationInFile): Promise<void>;

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    for (const entry of entriesAt(rootEntry(document), 'organizations')) {
      if (!this.declares(entry)) continue;
      await this.applyTo(await this.target(entry, manager, report));
    }
  }

  /**
   * Writes each entry with `write` (an input error names the entry) and records the row it wrote
   * under `<keyPrefix>/<name>`, the organization's slug unless given.
   */
  protected async writeEach(
    target: OrganizationInFile,
    entries: readonly DocumentEntry[],
    kind: string,
    write: (entry: DocumentEntry) => Promise<{ row: NamedRow; action: ApplyAction }>,
    keyPrefix = target.slug,
  ): Promise<void> {
    for (const entry of entries) {
      const { row, action } = await this.inEntry(entry, () => write(entry));
      target.report.record({ kind, key: `${keyPrefix}/${row.name}`, id: row.id, action });
    }
  }

  /**
   * For `apply --prune`: each `organizations[]` entry that states `list` (even empty), with the
   * entries it declares there, for `work` to delete the rest of.
   */
  protected async eachStatedList(
    document: ApplyDocument,
    list: string,
    manager: EntityManager,
    report: ApplyReport,
    work: (target: OrganizationInFile, declared: DocumentEntry[]) => Promise<void>,
  ): Promise<void> {
    for (const entry of entriesAt(rootEntry(document), 'organizations')) {
      if (!(list in entry.value)) continue;
      await work(await this.target(entry, manager, report), entriesAt(entry, list));
    }
  }

  /** `apply --prune` of flat lists: deletes what each stated list no longer declares, in order. */
  protected async pruneLists(
    document: ApplyDocument,
    manager: EntityManager,
    report: ApplyReport,
    lists: readonly PruneList[],
  ): Promise<void> {
    for (const { list, kind, keep = declaredNames, remove } of lists) {
      await this.eachStatedList(document, list, manager, report, async ({ slug, organization }, declared) => {
        recordDeleted(report, kind, slug, await remove(organization.id, keep(declared), manager));
      });
    }
  }

  /** The organization an entry names (the organizations section, order 100, wrote it in this transaction). */
  private async target(
    entry: DocumentEntry,
    manager: EntityManager,
    report: ApplyReport,
  ): Promise<OrganizationInFile> {
    const slug = requiredString(entry, 'slug');
    const organization = await this.organizations.findBySlug(slug, manager);
    if (!organization) throw new ApplyError(`${entry.path}: organization "${slug}" not found`);
    return { entry, slug, organization, manager, report };
  }
}

/**
 * One flat `organizations[].<list>` of rows matched by name: how an entry is written and how
 * `apply --prune` removes the undeclared rows.
 */
export interface NamedList extends PruneList {
  /** The fields an entry may carry (claimed for the unknown-key check). */
  fields: readonly string[];
  /** What must be unique among the entries, besides `name` (trimmed unless `exactNames`). */
  uniqueAlso?: string;
  /** Names compared as written rather than trimmed. */
  exactNames?: boolean;
  write: (
    organizationId: string,
    entry: DocumentEntry,
    manager: EntityManager,
  ) => Promise<{ row: NamedRow; action: ApplyAction }>;
}

/** What a NamedListsSection is: its section fields and its lists, written and pruned in order. */
export interface NamedListsSpec {
  name: string;
  order: number;
  inputErrors: readonly InputErrorClass[];
  lists: readonly NamedList[];
}

/**
 * A section that only writes flat lists of named rows (assistants, tools and plugins, API keys,
 * gateways): the keys it claims, the unique-name check, the write-and-record loop and the prune
 * come from its lists, so the section says only how one entry is written and removed.
 */
export abstract class NamedListsSection extends OrganizationApplySection {
  readonly name: string;
  readonly order: number;
  readonly keys: readonly string[];
  protected readonly inputErrors: readonly InputErrorClass[];
  protected readonly lists: readonly string[];
  private readonly namedLists: readonly NamedList[];

  constructor(organizations: OrganizationsService, spec: NamedListsSpec) {
    super(organizations);
    this.name = spec.name;
    this.order = spec.order;
    this.inputErrors = spec.inputErrors;
    this.namedLists = spec.lists;
    this.lists = spec.lists.map(({ list }) => list);
    this.keys = spec.lists.flatMap(({ list, fields }) => claimKeys(`organizations[].${list}`, fields));
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const { entry: organizationEntry, organization, manager } = target;
    const declared = this.namedLists.map((list) => ({
      list,
      entries: entriesAt(organizationEntry, list.list),
    }));
    for (const { list, entries } of declared) {
      assertUnique(entries, 'name', (entry) =>
        list.exactNames ? requiredString(entry, 'name') : requiredString(entry, 'name').trim(),
      );
      if (list.uniqueAlso) {
        const field = list.uniqueAlso;
        assertUnique(entries, field, (entry) => requiredString(entry, field));
      }
    }
    for (const { list, entries } of declared) {
      await this.writeEach(target, entries, list.kind, (entry) =>
        list.write(organization.id, entry, manager),
      );
    }
  }

  /** Prunes in the reverse of the write order: what is written first may be named by what follows. */
  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.pruneLists(document, manager, report, [...this.namedLists].reverse());
  }
}
