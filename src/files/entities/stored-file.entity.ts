import { Column, Entity, Index } from 'typeorm';
import { OrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/** Whether `extracted_text` holds the file's text (docs/knowledge.md "Text extraction"). */
export type TextStatus = 'extracted' | 'unavailable';

/**
 * One uploaded file (the Files API), its bytes and, beside them, the text extracted for later
 * chunking. A `user_data` file belongs to the end user who uploaded it (`user_id`); every other
 * purpose is organization-wide (`user_id` null).
 */
@Entity({ name: 'files' })
// Serves the list in both orders (forward and backward scans) and its keyset cursor.
@Index('IDX_files_organization_recent', ['organizationId', 'createdAt', 'id'])
export class StoredFileEntity extends OrganizationOwnedEntity {
  /** Set for `user_data` files only: the `x-user-id` that uploaded it. */
  @Column({ name: 'user_id', type: 'varchar', length: 256, nullable: true })
  userId!: string | null;

  @Column({ type: 'varchar', length: 32 })
  purpose!: string;

  @Column({ type: 'varchar', length: 512 })
  filename!: string;

  /** The media type the client sent with the part (informational: content is served as octet-stream). */
  @Column({ name: 'media_type', type: 'varchar', length: 255 })
  mediaType!: string;

  @Column({ type: 'bigint' })
  bytes!: string;

  /** The file itself. Lists never select it. */
  @Column({ type: 'bytea' })
  content!: Buffer;

  @Column({ name: 'text_status', type: 'varchar', length: 16 })
  textStatus!: TextStatus;

  /** The extracted text when `text_status` is `extracted`, else null. */
  @Column({ name: 'extracted_text', type: 'text', nullable: true })
  extractedText!: string | null;

  /** Set in code at millisecond precision so the list cursor round-trips exactly. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;
}
