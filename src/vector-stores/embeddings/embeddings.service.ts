import { Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../organizations/organizations.repository.js';
import type { EmbeddingsSettings } from '../../organizations/embeddings-settings.js';
import { TenantConfigPolicy } from '../../tenant-config/tenant-config.policy.js';
import { GuardedFetchPool } from '../../tools/ssrf/guarded-fetch-pool.js';
import type { EmbeddingUsage } from '../../usage/embedding-usage.repository.js';
import { UsageRecorder } from '../../usage/usage-recorder.js';
import { countTokens } from './token-count.js';
import { embedLocally, LOCAL_EMBEDDER_NAME } from './local-embedder.js';
import { embedRemotely, remoteEmbedderName, RemoteEmbeddingError } from './openai-compatible-embedder.js';

/** Whom an embeddings call is made for, in usage: the organization always, the rest when known. */
export type EmbeddingCaller = Omit<EmbeddingUsage, 'model' | 'tokens'>;

/**
 * Turns texts into unit-length vectors with the embedder a vector store was created with (its
 * name is kept on the store: chunks and queries must be embedded alike). New stores take the
 * organization's embedder (its `embeddings` setting, an OpenAI-compatible endpoint) or the local
 * one. A store whose embedder is no longer the organization's is never embedded into with
 * another (docs/knowledge.md "Embeddings": vectors of two models are not comparable). Every
 * call's tokens are recorded in the organization's usage (docs/usage.md "Embeddings").
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly policy: TenantConfigPolicy,
    private readonly guards: GuardedFetchPool,
    private readonly usage: UsageRecorder,
  ) {}

  /** The embedder new stores of the organization get. */
  async defaultEmbedder(organizationId: string): Promise<string> {
    const settings = await this.settings(organizationId);
    return settings ? remoteEmbedderName(settings) : LOCAL_EMBEDDER_NAME;
  }

  /**
   * One vector per text, in order, its tokens recorded as the caller's usage. Throws
   * EmbeddingError when the embedder cannot answer (nothing is recorded then: a failed call
   * answers no usage).
   */
  async embed(caller: EmbeddingCaller, embedder: string, texts: string[]): Promise<Float32Array[]> {
    const { organizationId } = caller;
    if (embedder === LOCAL_EMBEDDER_NAME) {
      // The local embedder costs nothing, but counts its tokens as chunking does, so usage shows
      // the same kind of row whichever embedder an organization has.
      const tokens = texts.reduce((sum, text) => sum + countTokens(text), 0);
      await this.usage.embeddings({ ...caller, model: LOCAL_EMBEDDER_NAME, tokens });
      return texts.map(embedLocally);
    }
    const settings = await this.settings(organizationId);
    if (!settings || remoteEmbedderName(settings) !== embedder) {
      throw new EmbeddingError(
        `This vector store was embedded with ${embedder}, which is no longer the organization's embedder; ` +
          'create a new vector store and attach its files again to use the current one',
      );
    }
    // The setting is the platform's (PLATFORM_ONLY_FIELDS): its key and host are read with the platform's reach.
    const access = await this.policy.access(organizationId, 'platform');
    const apiKey = settings.apiKeyEnv ? access.secrets[settings.apiKeyEnv] : undefined;
    if (settings.apiKeyEnv && !apiKey)
      throw new EmbeddingError("The organization's embeddings key (its apiKeyEnv) is not set on the service");
    try {
      const http = this.guards.for(access.policyKey, access.policy);
      const { vectors, tokens } = await embedRemotely(settings, apiKey, http.fetch, texts);
      await this.usage.embeddings({ ...caller, model: settings.model, tokens });
      return vectors;
    } catch (error) {
      if (error instanceof RemoteEmbeddingError) throw new EmbeddingError(error.message);
      throw error;
    }
  }

  private async settings(organizationId: string): Promise<EmbeddingsSettings | null> {
    return (await this.organizations.findById(organizationId))?.embeddings ?? null;
  }
}

/** An embedder's failure, its message fit for a file's `last_error` (no secret, no address). */
export class EmbeddingError extends Error {}
