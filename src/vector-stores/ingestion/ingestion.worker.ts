import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { BackgroundWorker } from '../../database/background-worker.js';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import { EmbeddingError, EmbeddingsService } from '../embeddings/embeddings.service.js';
import { chunkText } from './chunking.js';
import { IngestionRepository, type IngestionJob } from './ingestion.repository.js';

/** Attempts of one file before it is marked failed (each a lease: a crash counts as one). */
const MAX_ATTEMPTS = 3;
/** Texts sent to the embedder at once. */
const EMBEDDING_BATCH = 64;

/**
 * Ingests attached files in the background: claims one at a time from the queue (the
 * vector_store_files rows `in_progress`), chunks its text, embeds the chunks and stores them.
 * Woken at once by an attach on this replica. It also looks for work on a timer, for the files no
 * replica was woken for (a replica that died or stopped mid-file, a retry's delay): every
 * VECTOR_STORE_INGEST_POLL_MS after it found work or was woken, the wait doubling while the queue
 * stays empty up to VECTOR_STORE_INGEST_POLL_MAX_MS (5 s), so that an idle queue costs a statement
 * every few seconds rather than every second, and other replicas still join a busy queue soon. It starts once the boot has migrated the schema and read
 * the vector search mode (SchemaReadiness).
 * A file whose text is unavailable fails with `unsupported_file`; a passing failure is retried
 * (MAX_ATTEMPTS in all), then the file fails with `server_error`.
 */
@Injectable()
export class IngestionWorker extends BackgroundWorker<AppConfig['vectorStores']> implements OnModuleDestroy {
  private running: Promise<void> | null = null;
  private again = false;
  private started = false;
  /** The wait before the next look, when it comes up empty. */
  private pollDelayMs: number;
  /** Cancels the armed next look: a wake looks now instead. */
  private cancelPoll = (): void => undefined;

  constructor(
    private readonly queue: IngestionRepository,
    private readonly embeddings: EmbeddingsService,
    readiness: SchemaReadiness,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super('VectorStoreIngestion', readiness, config.vectorStores);
    this.pollDelayMs = config.vectorStores.ingestPollMs;
  }

  protected start(): void {
    this.started = true;
    this.wake();
  }

  async onModuleDestroy(): Promise<void> {
    this.timers.stop();
    // A file being ingested is left to its lease: another replica (or this one, restarted) takes it.
    await this.running?.catch(() => undefined);
  }

  /**
   * Looks for work now (after an attach), and from then on at the shortest interval again.
   * Before the worker started there is nothing to do: its start drains what was queued meanwhile.
   */
  wake(): void {
    this.pollDelayMs = this.settings.ingestPollMs;
    this.look();
  }

  /** One drain at a time; a wake during it runs another; the next look is timed when it ends. */
  private look(): void {
    if (!this.started || this.timers.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.cancelPoll();
    this.running = this.drain().then((claimed) => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.look();
        return;
      }
      const delay = claimed ? this.settings.ingestPollMs : this.pollDelayMs;
      this.pollDelayMs = Math.min(delay * 2, this.settings.ingestPollMaxMs);
      this.cancelPoll = this.timers.after(delay, () => this.look());
    });
  }

  /** Ingests queued files until none is left; true if it claimed any. */
  private async drain(): Promise<boolean> {
    let claimed = false;
    try {
      while (!this.timers.stopped) {
        const job = await this.queue.claim(this.settings.ingestLeaseMs);
        if (job === null) break;
        claimed = true;
        await this.ingest(job);
      }
    } catch (error) {
      this.logger.warn({ ...describeUnexpected(error), msg: 'vector store ingestion paused' });
    }
    return claimed;
  }

  private async ingest(job: IngestionJob): Promise<void> {
    const file = await this.queue.fileText(job);
    if (file === null) return; // deleted meanwhile: its row went with it
    if (file.textStatus !== 'extracted' || file.text === null) {
      await this.queue.fail(job, {
        code: 'unsupported_file',
        message:
          'No text could be extracted from this file (its format is not supported, or it holds no text)',
      });
      return;
    }
    try {
      const texts = chunkText(file.text, {
        maxChunkSizeTokens: job.chunkSize,
        chunkOverlapTokens: job.chunkOverlap,
      });
      const vectors: Float32Array[] = [];
      for (let at = 0; at < texts.length; at += EMBEDDING_BATCH) {
        vectors.push(
          // Ingestion has no request: its usage is the organization's (no assistant, key or user).
          ...(await this.embeddings.embed(
            { organizationId: job.organizationId },
            job.embedder,
            texts.slice(at, at + EMBEDDING_BATCH),
          )),
        );
      }
      await this.queue.complete(
        job,
        texts.map((text, index) => ({ text, embedding: vectors[index] })),
      );
    } catch (error) {
      if (job.attempts < MAX_ATTEMPTS) {
        this.logger.warn({
          ...describeUnexpected(error),
          msg: 'vector store file ingestion will be retried',
        });
        await this.queue.release(job, 1000 * 2 ** job.attempts);
        return;
      }
      const message =
        error instanceof EmbeddingError ? error.message : 'The file could not be ingested; attach it again';
      await this.queue.fail(job, { code: 'server_error', message });
    }
  }
}
