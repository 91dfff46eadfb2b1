import { Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../organizations/organizations.repository.js';
import type { EmbeddingsSettings } from '../../organizations/embeddings-settings.js';
import { TenantConfigPolicy } from '../../tenant-config/tenant-config.policy.js';
import { GuardedFetchPool } from '../../tools/ssrf/guarded-fetch-pool.js';
import { embedLocally, LOCAL_EMBEDDER_NAME } from './local-embedder.js';
import { embedRemotely, remoteEmbedderName, RemoteEmbeddingError } from './openai-compatible-embedder.js';

/**
 * Turns texts into unit-length vectors with the embedder a vector store was created with (its
 * name is kept on the store: chunks and queries must be embedded alike). New stores take the
 * organization's embedder (its `embeddings` setting, an OpenAI-compatible endpoint) or the local
 * one. A store whose embedder is no longer the organization's is never embedded into with
 * another (docs/knowledge.md "Embeddings": vectors of two models are not comparable).
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly policy: TenantConfigPolicy,
    private readonly guards: GuardedFetchPool,
  ) {}

  /** The embedder new stores of the organization get. */
  async defaultEmbedder(organizationId: string): Promise<string> {
    const settings = await this.settings(organizationId);
    return settings ? remoteEmbedderName(settings) : LOCAL_EMBEDDER_NAME;
  }

  /** One vector per text, in order. Throws EmbeddingError when the embedder cannot answer. */
  async embed(organizationId: string, embedder: string, texts: string[]): Promise<Float32Array[]> {
    if (embedder === LOCAL_EMBEDDER_NAME) return texts.map(embedLocally);
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
      return (await embedRemotely(settings, apiKey, http.fetch, texts)).vectors;
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
