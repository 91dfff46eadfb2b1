import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import type { StoredClaim } from './claims.repository.js';
import { ClaimsService } from './claims.service.js';
import {
  BulkClaimsDto,
  ClaimInputDto,
  ClaimParams,
  toClaimInput,
  UserClaimsParams,
} from './dto/claim-input.dto.js';

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
  async upsert(@Principal() principal: ApiKeyPrincipal, @Body() claim: ClaimInputDto): Promise<ClaimRecord> {
    return toRecord(await this.claims.upsert(principal.organizationId, toClaimInput(claim)));
  }

  @Post('bulk')
  @HttpCode(200)
  async upsertMany(
    @Principal() principal: ApiKeyPrincipal,
    @Body() body: BulkClaimsDto,
  ): Promise<ClaimRecord[]> {
    const stored = await this.claims.upsertMany(principal.organizationId, body.claims.map(toClaimInput));
    return stored.map(toRecord);
  }

  @Get(':userId')
  async list(
    @Principal() principal: ApiKeyPrincipal,
    @Param() { userId }: UserClaimsParams,
  ): Promise<ClaimRecord[]> {
    const claims = await this.claims.list(principal.organizationId, userId);
    return claims.map(toRecord);
  }

  @Get(':userId/:claimKey')
  async get(
    @Principal() principal: ApiKeyPrincipal,
    @Param() { userId, claimKey }: ClaimParams,
  ): Promise<ClaimRecord> {
    return toRecord(await this.claims.get(principal.organizationId, userId, claimKey));
  }

  @Delete(':userId/:claimKey')
  @HttpCode(204)
  async delete(
    @Principal() principal: ApiKeyPrincipal,
    @Param() { userId, claimKey }: ClaimParams,
  ): Promise<void> {
    await this.claims.delete(principal.organizationId, userId, claimKey);
  }
}
