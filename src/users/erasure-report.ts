/*
 * What an erasure answers (the CLI's `users erase --json`, DELETE /admin/v1/organizations/{org}/users/{userId}):
 * a type only, so that the web console reads the very shape the service writes.
 */

/** How many rows of each kind an erasure deleted. */
export interface ErasureReport {
  conversations: number;
  responses: number;
  messages: number;
  claims: number;
  memoryItems: number;
  memoryOptOuts: number;
  /** `user_data` files (files of other purposes are the organization's and stay). */
  files: number;
}
