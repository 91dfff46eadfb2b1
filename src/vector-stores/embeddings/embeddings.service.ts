import { Injectable } from '@nestjs/common';
import { embedLocally, LOCAL_EMBEDDER_NAME } from './local-embedder.js';

/**
 * Turns texts into unit-length vectors with the embedder a vector store was created with (its
 * name is kept on the store: chunks and queries must be embedded alike). The local embedder is
 * the only one yet (docs/knowledge.md "Embeddings"); a store naming another is refused.
 */
@Injectable()
export class EmbeddingsService {
  /** The embedder new stores get. */
  defaultEmbedder(): string {
    return LOCAL_EMBEDDER_NAME;
  }

  /** One vector per text, in order. Throws EmbeddingError when the embedder cannot answer. */
  embed(embedder: string, texts: string[]): Promise<Float32Array[]> {
    if (embedder !== LOCAL_EMBEDDER_NAME) {
      return Promise.reject(
        new EmbeddingError(`The embedder "${embedder}" is not available on this service`),
      );
    }
    return Promise.resolve(texts.map(embedLocally));
  }
}

/** An embedder's failure, its message fit for a file's `last_error` (no secret, no address). */
export class EmbeddingError extends Error {}
