import { applyDecorators, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { ApplyError, type ApplyDocument, type DocumentEntry } from './apply-document.js';
import type { ApplyReport } from './apply-report.js';

/**
 * One part of the declarative configuration that `apply -f` understands. A feature module adds
 * its own part (specialists, tools, gateways …) by providing a class decorated with
 * `@ApplySectionProvider()` in its module (usually by extending ApplySectionBase) and listing that
 * module among the admin tool's features (src/admin/admin.runner.ts); nothing else lists sections.
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
  /**
   * `apply --prune`: deletes what this section manages but the document no longer declares,
   * within the organizations the document names and only for the lists an entry states (an
   * organization entry without `assistants` leaves its assistants alone; `assistants: []`
   * deletes them all). Runs after every section applied, in descending order.
   */
  prune?(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void>;
}

/** The metadata ApplyService looks for. */
export const ApplySectionMarker = DiscoveryService.createDecorator<void>();

/** Makes a class an injectable ApplySection that ApplyService discovers. */
export function ApplySectionProvider(): ClassDecorator {
  return applyDecorators(Injectable(), ApplySectionMarker());
}

/**
 * The keys of a list at `path` and of its items' `fields`: `claimKeys('organizations',
 * ['slug'])` is `organizations` and `organizations[].slug`.
 */
export function claimKeys(path: string, fields: readonly string[]): string[] {
  return [path, ...fields.map((field) => `${path}[].${field}`)];
}

/** A class of error a feature's service throws for bad input (its message reads as a sentence). */
export type InputErrorClass = abstract new (...args: never[]) => Error;

/**
 * What every section shares: a service's input error while writing one entry of the file becomes
 * an ApplyError that starts with the entry's path, and aborts the whole apply.
 */
export abstract class ApplySectionBase implements ApplySection {
  abstract readonly name: string;
  abstract readonly order: number;
  abstract readonly keys: readonly string[];
  /** The errors of the services this section calls that mean "this entry is wrong". */
  protected abstract readonly inputErrors: readonly InputErrorClass[];

  abstract apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void>;

  /** Runs `work` for `entry`, naming the entry in any input error. */
  protected async inEntry<T>(entry: DocumentEntry, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (this.inputErrors.some((inputError) => error instanceof inputError)) {
        throw new ApplyError(`${entry.path}: ${(error as Error).message}`);
      }
      throw error;
    }
  }
}
