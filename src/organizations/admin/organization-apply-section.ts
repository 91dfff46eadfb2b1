import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  entriesAt,
  requiredString,
  rootEntry,
  type ApplyDocument,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import { ApplySectionBase } from '../../admin-framework/apply/apply-section.js';
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

/**
 * The base of every section of things that belong to an organization (tools, assistants,
 * specialists, gateways): for each `organizations[]` entry that declares some, it finds the
 * organization (the organizations section, order 100, wrote it in this same transaction) and
 * hands it to `applyTo`.
 */
/** The `name` of each declared entry: what prune keeps. */
export const declaredNames = (entries: readonly DocumentEntry[]): string[] =>
  entries.map((entry) => requiredString(entry, 'name'));

export abstract class OrganizationApplySection extends ApplySectionBase {
  constructor(protected readonly organizations: OrganizationsService) {
    super();
  }

  /** Whether this `organizations[]` entry declares anything this section writes. */
  protected abstract declares(organizationEntry: DocumentEntry): boolean;

  /** Writes what `target.entry` declares for this section, recording each item in `target.report`. */
  protected abstract applyTo(target: OrganizationInFile): Promise<void>;

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
      const slug = requiredString(entry, 'slug');
      const organization = await this.organizations.findBySlug(slug, manager);
      if (!organization) throw new ApplyError(`${entry.path}: organization "${slug}" not found`);
      await work({ entry, slug, organization, manager, report }, entriesAt(entry, list));
    }
  }

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    for (const entry of entriesAt(rootEntry(document), 'organizations')) {
      if (!this.declares(entry)) continue;
      const slug = requiredString(entry, 'slug');
      const organization = await this.organizations.findBySlug(slug, manager);
      if (!organization) throw new ApplyError(`${entry.path}: organization "${slug}" not found`);
      await this.applyTo({ entry, slug, organization, manager, report });
    }
  }
}
