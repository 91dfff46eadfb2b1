import { Column, Entity, Unique } from 'typeorm';
import { TimestampedOrganizationOwnedEntity } from '../../organizations/entities/organization-owned.entity.js';

/** The OAuth provider whose user token a plugin's tools need, and where the user signs in. */
export interface PluginOAuth {
  providerId: string;
  requiredScopes: string[];
  authUrl: string;
}

/** A group of tools, shown to users by name; may need the user's token for one OAuth provider. */
@Entity({ name: 'plugins' })
@Unique(['organizationId', 'name'])
export class PluginEntity extends TimestampedOrganizationOwnedEntity {
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'jsonb', nullable: true })
  oauth!: PluginOAuth | null;
}
