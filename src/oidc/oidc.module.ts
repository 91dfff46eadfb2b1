import { Module } from '@nestjs/common';
import { TokenVerifierService } from './token-verifier.service.js';

/** Verification of access tokens from the organization's identity provider (OIDC_* settings). */
@Module({
  providers: [TokenVerifierService],
  exports: [TokenVerifierService],
})
export class OidcModule {}
