import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import type { StoredClaim } from './claims.repository.js';
import { ClaimsService } from './claims.service.js';
import { parseBulkClaims, parseClaimInput, parseClaimKey, parseUserId } from './dto/claim-input.dto.js';

/** The claim record of decisions.md; other columns (the row id, the organization) stay inside. */
export interface ClaimRecord {
  userId: string;
  claimKey: string;
  claimValue: unknown;
  createdAt: string;
  updatedAt: string;
}

function toRecord(claim: StoredClaim): ClaimRecord {
  return {
    userId: claim.userId,
    claimKey: claim.claimKey,
    claimValue: claim.claimValue,
    createdAt: claim.createdAt.toISOString(),
    updatedAt: claim.updatedAt.toISOString(),
  };
}

/** Spec 4.4 under both path forms; neither is canonical, both behave identically. */
@Controller(['user-claims', 'v1/user-claims'])
@RequireScopes('user')
export class ClaimsController {
  constructor(private readonly claims: ClaimsService) {}

  @Post()
  @HttpCode(200)
  async upsert(@Principal() principal: ApiKeyPrincipal, @Body() body: unknown): Promise<ClaimRecord> {
    return toRecord(await this.claims.upsert(principal.organizationId, parseClaimInput(body)));
  }

  @Post('bulk')
  @HttpCode(200)
  async upsertMany(@Principal() principal: ApiKeyPrincipal, @Body() body: unknown): Promise<ClaimRecord[]> {
    const stored = await this.claims.upsertMany(principal.organizationId, parseBulkClaims(body));
    return stored.map(toRecord);
  }

  @Get(':userId')
  async list(
    @Principal() principal: ApiKeyPrincipal,
    @Param('userId') userId: string,
  ): Promise<ClaimRecord[]> {
    const claims = await this.claims.list(principal.organizationId, parseUserId(userId, 'userId'));
    return claims.map(toRecord);
  }

  @Get(':userId/:claimKey')
  async get(
    @Principal() principal: ApiKeyPrincipal,
    @Param('userId') userId: string,
    @Param('claimKey') claimKey: string,
  ): Promise<ClaimRecord> {
    return toRecord(
      await this.claims.get(
        principal.organizationId,
        parseUserId(userId, 'userId'),
        parseClaimKey(claimKey, 'claimKey'),
      ),
    );
  }

  @Delete(':userId/:claimKey')
  @HttpCode(204)
  async delete(
    @Principal() principal: ApiKeyPrincipal,
    @Param('userId') userId: string,
    @Param('claimKey') claimKey: string,
  ): Promise<void> {
    await this.claims.delete(
      principal.organizationId,
      parseUserId(userId, 'userId'),
      parseClaimKey(claimKey, 'claimKey'),
    );
  }
}
