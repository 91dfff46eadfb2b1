/** The Conversations API's limits (OpenAI's), shared by its DTOs and the OpenAPI document. */
export const MAX_ITEMS_PER_REQUEST = 20;
export const MAX_METADATA_KEYS = 16;
export const MAX_METADATA_KEY_LENGTH = 64;
export const MAX_METADATA_VALUE_LENGTH = 512;
