import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { ClaimsRepository, type StoredClaim } from './claims.repository.js';
import type { ClaimInput } from './dto/claim-input.dto.js';

/** User claims of the caller's organization; the organization always comes from the API key. */
@Injectable()
export class ClaimsService {
  constructor(private readonly repository: ClaimsRepository) {}

  async upsert(organizationId: string, claim: ClaimInput): Promise<StoredClaim> {
    const [stored] = await this.repository.upsert(organizationId, [claim]);
    return stored;
  }

  /** All or nothing: the claims were validated together and are written by one statement. */
  upsertMany(organizationId: string, claims: readonly ClaimInput[]): Promise<StoredClaim[]> {
    return this.repository.upsert(organizationId, claims);
  }

  list(organizationId: string, userId: string): Promise<StoredClaim[]> {
    return this.repository.listForUser(organizationId, userId);
  }

  async get(organizationId: string, userId: string, claimKey: string): Promise<StoredClaim> {
    const claim = await this.repository.findOne(organizationId, userId, claimKey);
    if (!claim) throw notFound(claimKey);
    return claim;
  }

  async delete(organizationId: string, userId: string, claimKey: string): Promise<void> {
    if (!(await this.repository.delete(organizationId, userId, claimKey))) throw notFound(claimKey);
  }
}

/** Names the claim key only: the user id may be personal data. */
function notFound(claimKey: string): ApiError {
  return new ApiError('claim_not_found', `No claim "${claimKey}" for this user`);
}
