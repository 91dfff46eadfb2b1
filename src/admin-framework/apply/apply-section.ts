import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import type { ApplyDocument } from './apply-document.js';
import type { ApplyReport } from './apply-report.js';

/**
 * One part of the declarative configuration that `apply -f` understands. A feature module adds
 * its own part (specialists, tools, gateways …) by providing a class decorated with
 * `@ApplySectionProvider()` in its module and importing that module into AdminModule; nothing
 * else lists sections.
 */
export interface ApplySection {
  /** Identifies the section in messages, e.g. `assistants`. */
  readonly name: string;
  /**
   * Sections run in ascending order inside one transaction, so a section can rely on the rows
   * of lower ones: organizations 100, assistants 200; a section of things that belong to an
   * assistant takes 300.
   */
  readonly order: number;
  /**
   * The document keys this section reads, as paths: `organizations[].assistants` is the
   * `assistants` key of every entry of `organizations`. A key no section claims in an object
   * whose keys are claimed is refused, so a typo never passes silently.
   */
  readonly keys: readonly string[];
  /**
   * Creates or updates what the document declares, through services given `manager` (the one
   * transaction), and records each item in `report`. Throws ApplyError to abort everything.
   */
  apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void>;
}

/** Marks a provider as an ApplySection so that ApplyService discovers it. */
export const ApplySectionProvider = DiscoveryService.createDecorator<void>();
